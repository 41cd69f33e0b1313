SELECT glucose FROM readings ; -- done

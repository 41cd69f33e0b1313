SELECT 1; -- comment
DROP TABLE readings
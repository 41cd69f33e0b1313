//! CSV read as CSV: records, not lines.
//!
//! A quoted field may hold the delimiter, quotes (doubled) and line breaks: LibreView quotes a
//! note typed with Enter, and a line-by-line reader cut such an export in two. Records carry the
//! line of the file they start on, so every problem names a line the user can find. Line breaks
//! are `\n`, `\r\n` or a lone `\r`. A record of nothing but delimiters and blanks is a blank
//! record: the vendors separate the sections of one file with them.
//!
//! Pure code over text the vendors' files shape; the fuzz target `import_csv` drives it.

use std::borrow::Cow;

/// One record: its fields, and the line of the file it starts on (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    /// Where it starts.
    pub line: usize,
    /// Its fields, unquoted.
    pub fields: Vec<Cow<'a, str>>,
}

impl Record<'_> {
    /// Field `at`, trimmed; empty when the record is shorter.
    pub fn get(&self, at: usize) -> &str {
        self.fields.get(at).map(|f| f.trim()).unwrap_or("")
    }

    /// Whether every field is empty or blank.
    pub fn is_blank(&self) -> bool {
        self.fields.iter().all(|f| f.trim().is_empty())
    }

    /// The first field, trimmed.
    pub fn first(&self) -> &str {
        self.get(0)
    }
}

/// A header row's columns by name, for the exports that name theirs in English whatever the
/// language (t:connect, CareLink).
#[derive(Debug, Clone, Default)]
pub struct Columns(std::collections::HashMap<String, usize>);

impl Columns {
    /// The columns of header row `header`.
    pub fn of(header: &Record<'_>) -> Columns {
        Columns(
            header
                .fields
                .iter()
                .enumerate()
                .map(|(i, f)| (f.trim().to_string(), i))
                .collect(),
        )
    }

    /// The column named `name` exactly, or when `name` ends with `*` the first whose name
    /// starts with the rest: its position and full name.
    pub fn find(&self, name: &str) -> Option<(usize, &str)> {
        match name.strip_suffix('*') {
            Some(prefix) => self
                .0
                .iter()
                .filter(|(n, _)| n.starts_with(prefix))
                .min_by_key(|(_, i)| **i)
                .map(|(n, i)| (*i, n.as_str())),
            None => self.0.get_key_value(name).map(|(n, i)| (*i, n.as_str())),
        }
    }

    /// The value of the column `name` (see [`Columns::find`]) in `record`, trimmed; empty when
    /// there is no such column.
    pub fn get<'r>(&self, record: &'r Record<'_>, name: &str) -> &'r str {
        self.find(name).map_or("", |(at, _)| record.get(at))
    }
}

/// Why the text is not CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsvError {
    /// The line where the field that never closes opens its quote.
    pub line: usize,
}

impl std::fmt::Display for CsvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a quoted field opened on line {} is never closed (a quote character is missing, \
             or the file was cut short)",
            self.line
        )
    }
}

/// The records of `text`, fields split at `delimiter`.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    text: &'a str,
    at: usize,
    line: usize,
    delimiter: u8,
    failed: bool,
}

impl<'a> Records<'a> {
    /// Records of `text` (without a byte-order mark) split at `delimiter` (an ASCII character).
    pub fn new(text: &'a str, delimiter: u8) -> Records<'a> {
        Records {
            text,
            at: 0,
            line: 1,
            delimiter,
            failed: false,
        }
    }

    fn record(&mut self) -> Result<Record<'a>, CsvError> {
        let bytes = self.text.as_bytes();
        let start_line = self.line;
        let mut fields = Vec::new();
        loop {
            let (field, end) = if bytes.get(self.at) == Some(&b'"') {
                self.quoted()?
            } else {
                self.unquoted()
            };
            fields.push(field);
            match end {
                End::Delimiter => continue,
                End::Line | End::Text => {
                    return Ok(Record {
                        line: start_line,
                        fields,
                    });
                }
            }
        }
    }

    /// A field that does not open with a quote: up to the delimiter or the line's end (a quote
    /// inside it is kept as it is).
    fn unquoted(&mut self) -> (Cow<'a, str>, End) {
        let bytes = self.text.as_bytes();
        let start = self.at;
        while let Some(&b) = bytes.get(self.at) {
            if b == self.delimiter || b == b'\n' || b == b'\r' {
                break;
            }
            self.at += 1;
        }
        let field = Cow::Borrowed(&self.text[start..self.at]);
        (field, self.end())
    }

    /// A field that opens with a quote: up to the quote that closes it (`""` is one quote; line
    /// breaks are kept), then anything before the delimiter, kept as written.
    fn quoted(&mut self) -> Result<(Cow<'a, str>, End), CsvError> {
        let bytes = self.text.as_bytes();
        let opened = self.line;
        self.at += 1;
        let mut value = String::new();
        let mut chunk = self.at;
        loop {
            match bytes.get(self.at) {
                None => return Err(CsvError { line: opened }),
                Some(b'"') if bytes.get(self.at + 1) == Some(&b'"') => {
                    value.push_str(&self.text[chunk..=self.at]);
                    self.at += 2;
                    chunk = self.at;
                }
                Some(b'"') => {
                    value.push_str(&self.text[chunk..self.at]);
                    self.at += 1;
                    break;
                }
                Some(b'\n') => {
                    self.line += 1;
                    self.at += 1;
                }
                Some(b'\r') => {
                    if bytes.get(self.at + 1) != Some(&b'\n') {
                        self.line += 1;
                    }
                    self.at += 1;
                }
                Some(_) => self.at += 1,
            }
        }
        let rest = self.at;
        while let Some(&b) = bytes.get(self.at) {
            if b == self.delimiter || b == b'\n' || b == b'\r' {
                break;
            }
            self.at += 1;
        }
        value.push_str(self.text[rest..self.at].trim());
        Ok((Cow::Owned(value), self.end()))
    }

    /// Consume what ends a field: the delimiter, a line break, or the end of the text.
    fn end(&mut self) -> End {
        let bytes = self.text.as_bytes();
        match bytes.get(self.at) {
            None => End::Text,
            Some(&b) if b == self.delimiter => {
                self.at += 1;
                End::Delimiter
            }
            Some(b'\r') => {
                self.at += 1;
                if bytes.get(self.at) == Some(&b'\n') {
                    self.at += 1;
                }
                self.line += 1;
                End::Line
            }
            Some(_) => {
                self.at += 1;
                self.line += 1;
                End::Line
            }
        }
    }
}

enum End {
    Delimiter,
    Line,
    Text,
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, CsvError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.text.len() {
            return None;
        }
        let record = self.record();
        self.failed = record.is_err();
        Some(record)
    }
}

/// The delimiter of a header line: the one of `,`, `;` and tab that occurs most often outside
/// quotes (a comma on a tie: locales with a decimal comma write `;`).
pub fn delimiter(line: &str) -> u8 {
    let (mut comma, mut semicolon, mut tab) = (0usize, 0usize, 0usize);
    let mut quoted = false;
    for b in line.bytes() {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => comma += 1,
            b';' if !quoted => semicolon += 1,
            b'\t' if !quoted => tab += 1,
            _ => {}
        }
    }
    if tab > comma && tab > semicolon {
        b'\t'
    } else if semicolon > comma {
        b';'
    } else {
        b','
    }
}

/// The delimiter of `text`, judged by its line with the most delimiters among the first 40
/// (the header row; a preamble line above it has few).
pub fn sniff_delimiter(text: &str) -> u8 {
    text.lines()
        .take(40)
        .map(|line| {
            let d = delimiter(line);
            let count = line.bytes().filter(|b| *b == d).count();
            (count, d)
        })
        .max_by_key(|(count, _)| *count)
        .map(|(_, d)| d)
        .unwrap_or(b',')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str, delimiter: u8) -> Vec<(usize, Vec<String>)> {
        Records::new(text, delimiter)
            .map(|r| {
                let r = r.unwrap();
                (r.line, r.fields.iter().map(|f| f.to_string()).collect())
            })
            .collect()
    }

    #[test]
    fn a_quoted_note_with_line_breaks_is_one_field_and_lines_stay_counted() {
        let text = "a,b,c\r\n1,\"Latte\r\nwith \"\"oat\"\" milk\n\",3\r\n\r\n4,5,6";
        assert_eq!(
            all(text, b','),
            vec![
                (1, vec!["a".into(), "b".into(), "c".into()]),
                (
                    2,
                    vec![
                        "1".into(),
                        "Latte\r\nwith \"oat\" milk\n".into(),
                        "3".into()
                    ]
                ),
                (5, vec!["".into()]),
                (6, vec!["4".into(), "5".into(), "6".into()]),
            ]
        );
    }

    #[test]
    fn an_unclosed_quote_names_the_line_it_opens_on() {
        let mut records = Records::new("a;b\n1;\"2\n3;4\n", b';');
        assert!(records.next().unwrap().is_ok());
        assert_eq!(records.next(), Some(Err(CsvError { line: 2 })));
        assert_eq!(records.next(), None);
    }

    #[test]
    fn delimiters_and_decimal_commas() {
        assert_eq!(delimiter("Index;Date;Time;Sensor Glucose (mg/dL)"), b';');
        assert_eq!(delimiter("Device,Serial Number,\"a;b\""), b',');
        assert_eq!(delimiter("a\tb\tc,d"), b'\t');
        assert_eq!(
            all("1,00000;2021/07/25;Insulin: 27,00", b';')[0].1,
            vec!["1,00000", "2021/07/25", "Insulin: 27,00"]
        );
        assert_eq!(
            sniff_delimiter("Last Name;First Name\nx;y\nIndex;Date;Time;BG\n"),
            b';'
        );
    }

    #[test]
    fn text_after_a_closing_quote_is_kept_and_a_stray_quote_is_literal() {
        assert_eq!(
            all("\"a\"b,c\"d\n", b',')[0].1,
            vec!["ab".to_string(), "c\"d".to_string()]
        );
        assert_eq!(all("x", b',')[0].1, vec!["x".to_string()]);
        assert!(all("", b',').is_empty());
        assert_eq!(all("a,\n", b',')[0].1, vec!["a".to_string(), String::new()]);
    }
}

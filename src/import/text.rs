//! A file's bytes as text, and text as a terminal may safely show it.
//!
//! Exports come as UTF-8 (with or without a byte-order mark), as UTF-16 with a mark (a
//! spreadsheet's "Unicode text"), or in the Windows code page of the account's language
//! (German CareLink and Clarity exports are ISO-8859-1: `Ger\xe4t`). Every byte decodes to
//! something: bytes that are not UTF-8 are read as Windows-1252, which gives each of them a
//! character.

use std::borrow::Cow;

/// `bytes` as text: a UTF-8 or UTF-16 byte-order mark is honoured (and dropped), valid UTF-8 is
/// taken as it is, and anything else is read as Windows-1252.
pub fn decode(bytes: &[u8]) -> Cow<'_, str> {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8_lossy(rest);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return Cow::Owned(utf16(rest, u16::from_le_bytes));
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return Cow::Owned(utf16(rest, u16::from_be_bytes));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => Cow::Owned(bytes.iter().map(|b| windows_1252(*b)).collect()),
    }
}

/// The first bytes of a file as text, as [`decode`] would read the whole: a multi-byte UTF-8
/// character cut at the end of the prefix does not make it read as Windows-1252.
pub fn decode_prefix(bytes: &[u8]) -> Cow<'_, str> {
    if let Err(e) = std::str::from_utf8(bytes)
        && e.error_len().is_none()
        && e.valid_up_to() + 4 > bytes.len()
    {
        let valid = e.valid_up_to();
        let cut = bytes.get(..valid).unwrap_or(bytes);
        if std::str::from_utf8(cut).is_ok() {
            return decode(cut);
        }
    }
    decode(bytes)
}

fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> String {
    let units = bytes.chunks_exact(2).filter_map(|pair| match pair {
        [first, second] => Some(unit([*first, *second])),
        _ => None,
    });
    char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// One byte of Windows-1252: ISO-8859-1 except 0x80–0x9F, where it has typographic characters.
fn windows_1252(byte: u8) -> char {
    const HIGH: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž',
        '\u{8f}', '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}',
        'ž', 'Ÿ',
    ];
    match byte {
        0x80..=0x9F => HIGH
            .get(usize::from(byte - 0x80))
            .copied()
            .unwrap_or(char::REPLACEMENT_CHARACTER),
        _ => char::from(byte),
    }
}

/// `text` with every character a terminal could act on written as an escape (`\u{1b}`): control
/// characters (C0, DEL, C1: escape sequences, line breaks, carriage returns) and the
/// invisible marks that reorder or hide text (bidirectional overrides and isolates, line and
/// paragraph separators). A file name or a value from a file goes through this before the
/// import's report prints it.
pub fn shown(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs_escape(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
                | '\u{2028}' | '\u{2029}' | '\u{feff}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_utf16_and_windows_1252_exports_decode_alike() {
        assert_eq!(decode("Gerät".as_bytes()), "Gerät");
        assert_eq!(decode(b"\xEF\xBB\xBFGer\xC3\xA4t"), "Gerät");
        assert_eq!(decode(b"Ger\xe4t \x80"), "Gerät €");
        let le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("Gerät".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(decode(&le), "Gerät");
        let be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain("Gerät".encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(decode(&be), "Gerät");
    }

    #[test]
    fn control_characters_and_bidi_marks_are_shown_escaped() {
        let cases = [
            ("plain name.csv", "plain name.csv"),
            ("\u{1b}[31mred\u{7}.csv", "\\u{1b}[31mred\\u{7}.csv"),
            ("a\nb\r\tc", "a\\u{a}b\\u{d}\\u{9}c"),
            ("x\u{9b}y\u{202e}z", "x\\u{9b}y\\u{202e}z"),
            ("Glukose-Werte äöü", "Glukose-Werte äöü"),
        ];
        for (raw, want) in cases {
            assert_eq!(shown(raw), want, "{raw:?}");
        }
    }
}

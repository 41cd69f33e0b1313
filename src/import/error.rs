//! Why an import, or one file of it, did not go through: one error type with a kind, the
//! message in the user's terms, and the next step that fits the cause.

use std::fmt;

/// What went wrong, which decides the next step and the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The output exists, and neither `--replace` nor `--append` was given.
    OutputExists,
    /// `--append` to a database that does not exist.
    NothingToAppendTo,
    /// No file or folder was named.
    NoInput,
    /// A named file or folder does not exist or cannot be listed.
    InputMissing,
    /// A named folder holds no file.
    EmptyFolder,
    /// `--table` was not a plain name, or not given with exactly one file.
    TableName,
    /// `--time-zone` names no zone.
    TimeZone,
    /// A FIFO, socket or device: never opened.
    SpecialFile,
    /// The file could not be read.
    Unreadable,
    /// A vendor's CSV that is not valid CSV.
    BrokenCsv,
    /// A Nightscout file that is not valid JSON.
    BrokenJson,
    /// An Apple Health export that is not readable XML.
    BrokenXml,
    /// It looks like a CGM, pump or health export, but not one `import` knows.
    UnrecognisedHealthExport,
    /// A known export without a record `import` reads.
    NoRecords,
    /// A known export without a column it needs.
    MissingColumn,
    /// Another CSV that DuckDB's reader could not read.
    GenericCsv,
    /// The output's folder could not be created.
    OutputFolder,
    /// Writing the database failed.
    Database,
    /// Renaming the finished database into place failed.
    MoveIntoPlace,
}

impl ErrorKind {
    /// Whether the command line is at fault (exit 2) rather than a file or the disk (exit 1).
    pub fn is_usage(self) -> bool {
        match self {
            ErrorKind::OutputExists
            | ErrorKind::NothingToAppendTo
            | ErrorKind::NoInput
            | ErrorKind::InputMissing
            | ErrorKind::EmptyFolder
            | ErrorKind::TableName
            | ErrorKind::TimeZone => true,
            ErrorKind::SpecialFile
            | ErrorKind::Unreadable
            | ErrorKind::BrokenCsv
            | ErrorKind::BrokenJson
            | ErrorKind::BrokenXml
            | ErrorKind::UnrecognisedHealthExport
            | ErrorKind::NoRecords
            | ErrorKind::MissingColumn
            | ErrorKind::GenericCsv
            | ErrorKind::OutputFolder
            | ErrorKind::Database
            | ErrorKind::MoveIntoPlace => false,
        }
    }

    /// What the user can do about it.
    pub fn next_step(self) -> &'static str {
        match self {
            ErrorKind::OutputExists => {
                "add --append to add a newer export's records to it, --replace to rebuild it \
                 from these files, or choose another --out"
            }
            ErrorKind::NothingToAppendTo => {
                "leave out --append to create it, or give the path of the existing database"
            }
            ErrorKind::NoInput => "name export files, or a folder of them",
            ErrorKind::InputMissing => "check the path, and that the file or folder is readable",
            ErrorKind::EmptyFolder => {
                "put the exports downloaded from the vendors' sites in that folder, or name the \
                 files"
            }
            ErrorKind::TableName => {
                "give --table a plain name (letters, digits and _, starting with a letter) and \
                 exactly one CSV file"
            }
            ErrorKind::TimeZone => {
                "give --time-zone an IANA zone name, such as Europe/Berlin or Australia/Brisbane"
            }
            ErrorKind::SpecialFile => {
                "name the export file itself: import reads regular files only, never a FIFO, \
                 socket or device"
            }
            ErrorKind::Unreadable => "check that the file is readable, then run the import again",
            ErrorKind::BrokenCsv => {
                "the file was cut short or changed after the download: download the export \
                 again from the vendor's site and import that file as it is"
            }
            ErrorKind::BrokenJson => {
                "download it again from your Nightscout site (api/v1/entries.json or \
                 treatments.json): the file was cut short or is not JSON"
            }
            ErrorKind::BrokenXml => {
                "unzip Apple Health's export.zip again and give its export.xml as it is"
            }
            ErrorKind::UnrecognisedHealthExport => {
                "if the vendor's site offers another export (CSV from Clarity, LibreView, \
                 CareLink or t:connect), import that one; to have this layout supported, report \
                 its header row (the column names only, never the lines above it or your \
                 readings) to duckgate's maintainers; to import it anyway as a plain table, give \
                 it alone with --table NAME"
            }
            ErrorKind::NoRecords => {
                "check that the export covers the records and dates you wanted (for Apple \
                 Health: that your CGM's or meter's app writes glucose to Health), then export \
                 again"
            }
            ErrorKind::MissingColumn => {
                "download the export again from the vendor's site, without removing columns"
            }
            ErrorKind::GenericCsv => {
                "check that it is a CSV file; a spreadsheet saves one with Save as > CSV"
            }
            ErrorKind::OutputFolder => {
                "create the folder yourself, or choose an --out in a folder you can write"
            }
            ErrorKind::Database | ErrorKind::MoveIntoPlace => {
                "check that the output folder is writable and has free space, then run the \
                 import again"
            }
        }
    }
}

/// Why an import, or one file of it, did not go through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    kind: ErrorKind,
    message: String,
}

impl ImportError {
    /// An error of `kind`, told by `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ImportError {
        ImportError {
            kind,
            message: message.into(),
        }
    }

    /// Its kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What to do about it.
    pub fn next_step(&self) -> &'static str {
        self.kind.next_step()
    }

    /// A file that could not be read.
    pub fn unreadable(error: std::io::Error) -> ImportError {
        ImportError::new(ErrorKind::Unreadable, format!("cannot read it: {error}"))
    }

    /// A vendor's CSV whose quoting is broken.
    pub fn broken_csv(error: super::csv::CsvError) -> ImportError {
        ImportError::new(
            ErrorKind::BrokenCsv,
            format!("it is not valid CSV: {error}"),
        )
    }

    /// A known export without the column `column`.
    pub fn missing_column(export: &str, column: &str) -> ImportError {
        ImportError::new(
            ErrorKind::MissingColumn,
            format!("a {export} without its {column} column"),
        )
    }

    /// A known export with nothing `import` reads.
    pub fn no_records(export: &str) -> ImportError {
        ImportError::new(
            ErrorKind::NoRecords,
            format!("it is a {export}, but holds no records"),
        )
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ImportError {}

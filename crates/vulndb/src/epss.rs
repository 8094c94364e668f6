//! FIRST EPSS (Exploit Prediction Scoring System) daily scores: a CSV file, usually
//! gzipped, with an optional first comment line `#model_version:v2026.06.15,score_date:…`,
//! the header `cve,epss,percentile`, then one row per CVE with the probability of
//! exploitation in the next 30 days and its percentile, both between 0 and 1. A full file
//! has about 300,000 rows, so it is read as a stream, one bounded line at a time.

use std::fmt;
use std::io::{self, BufRead};

use crate::FeedError;
use crate::cwe::support::excerpt;

const WHAT: &str = "EPSS scores";

/// The longest line accepted, in bytes, not counting its line break.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// The score of one CVE.
#[derive(Debug, Clone, PartialEq)]
pub struct EpssScore {
    /// The CVE scored.
    pub cve_id: model::CveId,
    /// The probability of exploitation in the next 30 days, within 0..=1.
    pub epss: f64,
    /// The share of CVEs scored at or below this one, within 0..=1.
    pub percentile: f64,
}

/// An EPSS file being read: the metadata of its comment line, and an iterator over its
/// rows. After a bad row the iterator goes on with the next line; after an I/O error it
/// ends.
pub struct EpssReader {
    /// `model_version` from the comment line, such as `v2026.06.15`.
    pub model_version: Option<String>,
    /// `score_date` from the comment line, such as `2026-09-29T12:00:22Z`.
    pub score_date: Option<String>,
    lines: Lines,
    done: bool,
}

impl fmt::Debug for EpssReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EpssReader")
            .field("model_version", &self.model_version)
            .field("score_date", &self.score_date)
            .field("line", &self.lines.number)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

/// Starts reading an EPSS file, plain or gzipped: reads the optional comment line and
/// the header, and returns the reader of the rows.
pub fn read_epss<R: BufRead + Send + 'static>(reader: R) -> Result<EpssReader, FeedError> {
    let inner = crate::maybe_gzip(reader).map_err(io_error)?;
    let mut lines = Lines { inner, buf: Vec::new(), number: 0 };
    let (mut model_version, mut score_date) = (None, None);
    let mut first = true;
    loop {
        let Some((number, line)) = lines.next_line()? else {
            return Err(FeedError::format(WHAT, format!("line {}", lines.number + 1), "no header line"));
        };
        let line = if first { line.strip_prefix('\u{feff}').unwrap_or(line) } else { line };
        let line = line.trim();
        if first && let Some(comment) = line.strip_prefix('#') {
            for (key, value) in comment.split(',').filter_map(|pair| pair.split_once(':')) {
                match key.trim() {
                    "model_version" => model_version = Some(value.trim().to_owned()),
                    "score_date" => score_date = Some(value.trim().to_owned()),
                    _ => {}
                }
            }
        } else if !line.is_empty() {
            if !line.eq_ignore_ascii_case("cve,epss,percentile") {
                return Err(FeedError::format(
                    WHAT,
                    format!("line {number}"),
                    format!("expected the header cve,epss,percentile, found {}", excerpt(line)),
                ));
            }
            break;
        }
        first = false;
    }
    Ok(EpssReader { model_version, score_date, lines, done: false })
}

impl Iterator for EpssReader {
    type Item = Result<EpssScore, FeedError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            match self.lines.next_line() {
                Ok(Some((number, line))) if !line.trim().is_empty() => return Some(parse_row(number, line)),
                Ok(Some(_)) => {}
                Ok(None) => self.done = true,
                Err(e @ FeedError::Io { .. }) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Err(e) => return Some(Err(e)),
            }
        }
        None
    }
}

/// Parses the row `cve,epss,percentile` found on line `number`.
fn parse_row(number: u64, line: &str) -> Result<EpssScore, FeedError> {
    let error = |message: String| FeedError::format(WHAT, format!("line {number}"), message);
    let mut fields = line.split(',').map(str::trim);
    let (Some(cve), Some(epss), Some(percentile), None) = (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(error(format!("expected 3 fields cve,epss,percentile, found {}", excerpt(line))));
    };
    let cve_id = model::CveId::parse(cve).map_err(|_| error(format!("{} is not a CVE id", excerpt(cve))))?;
    let probability = |name: &str, raw: &str| match raw.parse::<f64>() {
        Ok(value) if value.is_finite() && (0.0..=1.0).contains(&value) => Ok(value),
        _ => Err(error(format!("{name} {} is not a number between 0 and 1", excerpt(raw)))),
    };
    Ok(EpssScore { cve_id, epss: probability("epss", epss)?, percentile: probability("percentile", percentile)? })
}

fn io_error(source: io::Error) -> FeedError {
    FeedError::Io { what: WHAT.to_owned(), source }
}

/// Numbered lines of at most [`MAX_LINE_BYTES`], read without buffering more.
struct Lines {
    inner: crate::FeedReader,
    buf: Vec<u8>,
    /// The number of the last line read, from 1.
    number: u64,
}

impl Lines {
    /// The next line, without its line break, with its number. A line that is too long
    /// or not UTF-8 is an error (and is skipped); `None` at the end of the input.
    fn next_line(&mut self) -> Result<Option<(u64, &str)>, FeedError> {
        self.buf.clear();
        let mut too_long = false;
        let mut read_any = false;
        loop {
            let chunk = self.inner.fill_buf().map_err(io_error)?;
            if chunk.is_empty() {
                break;
            }
            read_any = true;
            let (used, complete) = match chunk.iter().position(|&b| b == b'\n') {
                Some(newline) => (newline + 1, true),
                None => (chunk.len(), false),
            };
            if !too_long {
                let content = chunk.get(..used).unwrap_or(chunk);
                if self.buf.len() + content.len() > MAX_LINE_BYTES + 2 {
                    too_long = true;
                    self.buf.clear();
                } else {
                    self.buf.extend_from_slice(content);
                }
            }
            self.inner.consume(used);
            if complete {
                break;
            }
        }
        if !read_any {
            return Ok(None);
        }
        self.number += 1;
        let at = || format!("line {}", self.number);
        let mut line = self.buf.as_slice();
        line = line.strip_suffix(b"\n").unwrap_or(line);
        line = line.strip_suffix(b"\r").unwrap_or(line);
        if too_long || line.len() > MAX_LINE_BYTES {
            return Err(FeedError::format(WHAT, at(), format!("line longer than {MAX_LINE_BYTES} bytes")));
        }
        match std::str::from_utf8(line) {
            Ok(text) => Ok(Some((self.number, text))),
            Err(_) => Err(FeedError::format(WHAT, at(), "line is not UTF-8")),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::{BufReader, Cursor, Write};

    use flate2::Compression;
    use flate2::write::GzEncoder;
    use proptest::prelude::*;

    use super::*;
    use crate::cwe::support::shared_data;

    const SMALL: &str = "#model_version:v2026.06.15,score_date:2026-09-29T12:00:22Z\n\
                         cve,epss,percentile\n\
                         CVE-1999-0001,0.03351,0.88255\r\n\
                         \n\
                         CVE-1999-0002,0.27858,0.98037";

    fn read_all(bytes: Vec<u8>) -> Result<(EpssReader, Vec<Result<EpssScore, FeedError>>), FeedError> {
        let mut reader = read_epss(Cursor::new(bytes))?;
        let rows = reader.by_ref().collect();
        Ok((reader, rows))
    }

    fn line_of(result: &Result<EpssScore, FeedError>) -> String {
        match result {
            Err(FeedError::Format { position, .. }) => position.clone(),
            other => panic!("expected a format error, got {other:?}"),
        }
    }

    #[test]
    fn small_file() {
        let (reader, rows) = read_all(SMALL.into()).unwrap();
        assert_eq!(reader.model_version.as_deref(), Some("v2026.06.15"));
        assert_eq!(reader.score_date.as_deref(), Some("2026-09-29T12:00:22Z"));
        let rows: Vec<EpssScore> = rows.into_iter().collect::<Result<_, _>>().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[1],
            EpssScore { cve_id: model::CveId::parse("CVE-1999-0002").unwrap(), epss: 0.27858, percentile: 0.98037 }
        );
    }

    #[test]
    fn comment_line_is_optional() {
        let (reader, rows) = read_all(b"cve,epss,percentile\nCVE-1999-0001,0,1\n".to_vec()).unwrap();
        assert_eq!((reader.model_version, reader.score_date), (None, None));
        assert_eq!(rows.len(), 1);
    }

    #[test]
    fn missing_or_wrong_header_is_an_error() {
        assert!(read_all(Vec::new()).is_err());
        assert!(read_all(b"#model_version:v1\n".to_vec()).is_err());
        let err = read_all(b"cve,score\nCVE-1999-0001,0.5\n".to_vec()).unwrap_err();
        assert!(matches!(&err, FeedError::Format { position, .. } if position == "line 1"), "{err}");
    }

    #[test]
    fn bad_rows_name_their_line_and_reading_goes_on() {
        let text = "cve,epss,percentile\nCVE-1999-0001,abc,0.5\nCVE-1999-0002,0.5,1.5\nCVE-1999-0003,NaN,0.5\n\
                    CVE-99-1,0.1,0.1\nCVE-1999-0004,0.1\nCVE-1999-0005,0.1,0.2,0.3\nCVE-1999-0006,0.1,0.2\n";
        let (_, rows) = read_all(text.into()).unwrap();
        let lines: Vec<String> = rows[..6].iter().map(line_of).collect();
        assert_eq!(lines, ["line 2", "line 3", "line 4", "line 5", "line 6", "line 7"]);
        assert_eq!(rows[6].as_ref().unwrap().cve_id.as_str(), "CVE-1999-0006");
    }

    #[test]
    fn overlong_line_is_an_error() {
        let mut text = b"cve,epss,percentile\nCVE-1999-0001,0.1,0.2\n".to_vec();
        text.extend(std::iter::repeat_n(b'9', MAX_LINE_BYTES + 1));
        text.extend_from_slice(b"\nCVE-1999-0002,0.1,0.2\n");
        let (_, rows) = read_all(text).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(line_of(&rows[1]), "line 3");
        assert!(rows[2].is_ok());
        // A line exactly at the limit is read (and then rejected as a bad row, not as too long).
        let mut text = b"cve,epss,percentile\n".to_vec();
        text.extend(std::iter::repeat_n(b'9', MAX_LINE_BYTES));
        let (_, rows) = read_all(text).unwrap();
        assert!(matches!(&rows[0], Err(FeedError::Format { message, .. }) if message.contains("3 fields")));
    }

    fn check_sample(reader: EpssReader) {
        assert_eq!(reader.model_version.as_deref(), Some("v2026.06.15"));
        let rows: Vec<EpssScore> = reader.collect::<Result<_, _>>().unwrap();
        // The sample named "first100" holds 99 data rows (101 lines with the comment and header).
        assert_eq!(rows.len(), 99);
        assert_eq!(rows[0].cve_id.as_str(), "CVE-1999-0001");
        assert_eq!((rows[0].epss, rows[0].percentile), (0.03351, 0.88255));
    }

    #[test]
    fn real_sample() {
        let Some(path) = shared_data("epss/epss_scores_sample_first100.csv") else { return };
        check_sample(read_epss(BufReader::new(File::open(path).unwrap())).unwrap());
    }

    #[test]
    fn real_sample_gzipped() {
        let Some(path) = shared_data("epss/epss_scores_sample_first100.csv") else { return };
        let dir = tempfile::tempdir().unwrap();
        let gz_path = dir.path().join("epss_scores.csv.gz");
        let mut encoder = GzEncoder::new(File::create(&gz_path).unwrap(), Compression::default());
        encoder.write_all(&std::fs::read(path).unwrap()).unwrap();
        encoder.finish().unwrap();
        check_sample(read_epss(BufReader::new(File::open(gz_path).unwrap())).unwrap());
    }

    proptest! {
        #[test]
        fn never_panics(body in "(CVE-1999-0001|[0-9.,eE+\\-]|inf|NaN|\n|\r|#|,){0,60}") {
            if let Ok((_, rows)) = read_all(format!("cve,epss,percentile\n{body}").into()) {
                for score in rows.into_iter().flatten() {
                    prop_assert!((0.0..=1.0).contains(&score.epss) && (0.0..=1.0).contains(&score.percentile));
                }
            }
        }
    }
}

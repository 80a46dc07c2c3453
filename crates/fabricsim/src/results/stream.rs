//! Trace samples streamed to their CSV files while the run takes them (`trace.csv` and
//! `port_trace.csv`, for `fabricsim run`). A traced run can take far more samples than fit in
//! memory — the bundled example sampled every 1 ns on every port takes 35 million, 1.7 GB as
//! records and as much again as text — so the CLI writes each sample's row through a bounded
//! buffer ([`RowBuffer`]) as it is taken instead of keeping the samples to the end. The rows
//! are the ones [`crate::Results::trace_csv`] and [`crate::Results::port_trace_csv`] write, so
//! the files are byte for byte the same either way.
//!
//! The files are written under their temporary names ([`super::out_dir::PARTIAL`]) and moved into
//! place with the other result files by [`crate::Results::write_to`]; a run that stops early or
//! fails removes them. Library callers that read the samples (the Python package, tests) keep
//! them in memory, as before ([`crate::run_threads`]); [`crate::run_into`] streams.

use super::out_dir::OutDir;
use super::schema;
use crate::engine::trace::{ConnSample, PortSample, SampleSink};
use crate::error::Result;
use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;

/// Bytes of rows a [`RowBuffer`] collects before handing them to its file: large enough that
/// a write costs one system call per about 1,500 rows, small enough to be no memory at all.
pub const BUFFER_BYTES: usize = crate::budget::TRACE_FILE_BUFFER_BYTES;

/// Room kept in a [`RowBuffer`] beyond [`BUFFER_BYTES`] for the row that crosses it, so that
/// rows never make the buffer grow (a row is under 200 bytes unless a link name is very long).
const ROW_ROOM: usize = 1 << 10;

/// Rows on their way to a file: collected in a buffer of at most `limit` bytes (plus the row
/// that crossed it), which is written out whenever it is full. After a failed write the rows
/// are dropped and [`RowBuffer::finish`] reports the error.
#[derive(Debug)]
pub(crate) struct RowBuffer<W: Write> {
    out: W,
    buf: String,
    limit: usize,
    rows: u64,
    error: Option<io::Error>,
}

impl<W: Write> RowBuffer<W> {
    /// A buffer for `out` that writes once it holds `limit` bytes.
    pub(crate) fn new(out: W, limit: usize) -> Self {
        RowBuffer { out, buf: String::with_capacity(limit + ROW_ROOM), limit, rows: 0, error: None }
    }

    /// Appends text that is not a row (the header).
    pub(crate) fn text(&mut self, text: &str) {
        self.buf.push_str(text);
        self.write_if_full();
    }

    /// Appends the row that `row` writes.
    #[inline]
    pub(crate) fn row(&mut self, row: impl FnOnce(&mut String)) {
        row(&mut self.buf);
        self.rows += 1;
        self.write_if_full();
    }

    #[inline]
    fn write_if_full(&mut self) {
        if self.buf.len() >= self.limit {
            self.write_out();
        }
    }

    /// Hands the buffer to the file (dropping it after an earlier failure).
    fn write_out(&mut self) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(self.buf.as_bytes()) {
                self.error = Some(e);
            }
        }
        self.buf.clear();
    }

    /// Bytes waiting in the buffer.
    #[cfg(test)]
    pub(crate) fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Writes what is left and flushes; the rows written, or the first write's error.
    pub(crate) fn finish(&mut self) -> io::Result<u64> {
        self.write_out();
        match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush().map(|()| self.rows),
        }
    }
}

/// A trace file written during the run, under its temporary name in folder `dir`, that
/// [`crate::Results::write_to`] moves into place.
#[derive(Clone, Debug, PartialEq)]
pub struct Streamed {
    /// The file's name (`trace.csv`, `port_trace.csv`).
    pub name: &'static str,
    /// The results folder it was written into.
    pub dir: PathBuf,
    /// Its rows (samples).
    pub rows: u64,
}

impl Streamed {
    /// Where the file is until it is moved into place.
    pub fn path(&self) -> PathBuf {
        self.dir.join(super::out_dir::partial_name(self.name))
    }
}

/// One streamed file: its final name and its rows on their way.
#[derive(Debug)]
struct Stream {
    name: &'static str,
    rows: RowBuffer<File>,
}

/// The file sink of the samples: `trace.csv` and `port_trace.csv` of a results folder, each
/// when its series are traced. The engine's other sink is the results' vectors
/// ([`crate::engine::trace::Tracer`]).
#[derive(Debug)]
pub struct TraceFiles {
    out: OutDir,
    conns: Option<Stream>,
    ports: Option<Stream>,
    /// `"NODE-NODE"` of each traced port, in the tracer's order.
    links: Vec<String>,
}

impl TraceFiles {
    /// Opens the files under their temporary names in `out` (`conns`: whether connections are
    /// traced; `links`: the traced ports' names, in the order they are sampled), headers written.
    pub(crate) fn open(out: &OutDir, conns: bool, links: Vec<String>) -> Result<TraceFiles> {
        let open = |s: &'static schema::FileSchema| -> Result<Stream> {
            let file = File::create(out.partial_path(s.name)).map_err(|e| out.write_error(s.name, e))?;
            let mut rows = RowBuffer::new(file, BUFFER_BYTES);
            rows.text(&s.header());
            Ok(Stream { name: s.name, rows })
        };
        let mut files = TraceFiles { out: out.clone(), conns: None, ports: None, links };
        if conns {
            files.conns = Some(open(&schema::TRACE)?);
        }
        if !files.links.is_empty() {
            files.ports = Some(open(&schema::PORT_TRACE)?);
        }
        Ok(files)
    }

    /// Writes what is buffered and closes the files, still under their temporary names; the
    /// first failure is an [`crate::Error::Write`] naming the file (and every file is removed).
    pub(crate) fn finish(mut self) -> Result<Vec<Streamed>> {
        let mut done = Vec::new();
        for slot in [&mut self.conns, &mut self.ports] {
            if let Some(mut f) = slot.take() {
                let rows = f.rows.finish();
                drop(f.rows);
                match rows {
                    Ok(rows) => done.push(Streamed { name: f.name, dir: self.out.path().to_path_buf(), rows }),
                    Err(e) => {
                        for s in &done {
                            let _ = std::fs::remove_file(self.out.partial_path(s.name));
                        }
                        let _ = std::fs::remove_file(self.out.partial_path(f.name));
                        return Err(self.out.write_error(f.name, e));
                    }
                }
            }
        }
        Ok(done)
    }
}

impl SampleSink for TraceFiles {
    #[inline]
    fn conn(&mut self, s: &ConnSample) {
        if let Some(f) = &mut self.conns {
            f.rows.row(|b| super::csv::trace_row(b, s));
        }
    }

    #[inline]
    fn port(&mut self, i: usize, s: &PortSample) {
        if let Some(f) = &mut self.ports {
            let link = self.links.get(i).map_or("", String::as_str);
            f.rows.row(|b| super::csv::port_trace_row(b, s, link));
        }
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

impl Drop for TraceFiles {
    /// Files not finished (a run stopped or failed) are removed.
    fn drop(&mut self) {
        for f in [self.conns.take(), self.ports.take()].into_iter().flatten() {
            let name = f.name;
            drop(f);
            let _ = std::fs::remove_file(self.out.partial_path(name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;

    /// A writer that counts what it was given and how often.
    #[derive(Default)]
    struct Counting {
        bytes: Vec<u8>,
        writes: usize,
    }

    impl Write for Counting {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.writes += 1;
            self.bytes.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn sample(i: u64) -> PortSample {
        PortSample { at: Time(i * 1000), port: (i % 7) as u32, data_bytes: i * 3, tx_bytes: i * 4096, paused: i % 2 == 0, marks: i / 5 }
    }

    #[test]
    fn the_buffer_holds_a_bounded_number_of_rows_and_writes_them_all() {
        // 100,000 samples through a 4 KiB buffer: the writer receives them as they come, the
        // buffer never holds more than the limit and one row (a row here is under 80 bytes).
        let limit = 4096;
        let mut rows = RowBuffer::new(Counting::default(), limit);
        let mut want = String::new();
        rows.text("h\n");
        want.push_str("h\n");
        let mut most = 0;
        for i in 0..100_000 {
            let s = sample(i);
            rows.row(|b| super::super::csv::port_trace_row(b, &s, "tor0-agg1"));
            super::super::csv::port_trace_row(&mut want, &s, "tor0-agg1");
            most = most.max(rows.buffered());
            assert!(rows.buffered() < limit, "the buffer is written out once full");
        }
        assert!(most > limit - 80 && most < limit, "{most}");
        assert!(rows.out.writes >= want.len() / (limit + 80), "written as it filled: {} writes", rows.out.writes);
        assert_eq!(rows.finish().unwrap(), 100_000);
        assert_eq!(rows.buffered(), 0);
        assert_eq!(String::from_utf8(std::mem::take(&mut rows.out.bytes)).unwrap(), want);
    }

    #[test]
    fn a_failed_write_is_reported_once_and_stops_writing() {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
        let Ok(full) = full else { return }; // Not Linux.
        let mut rows = RowBuffer::new(full, 64);
        for i in 0..1000 {
            let s = sample(i);
            rows.row(|b| super::super::csv::port_trace_row(b, &s, "x"));
        }
        let e = rows.finish().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(28), "{e}");
        assert!(rows.buffered() == 0 && rows.finish().is_ok());
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_trace_file_that_cannot_be_written_is_named_and_removed() {
        let d = std::env::temp_dir().join(format!("fabricsim-stream-full-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let out = OutDir::prepare(&d, "--out").unwrap();
        // port_trace.csv's temporary name leads to /dev/full: a full disk for that file alone.
        std::os::unix::fs::symlink("/dev/full", out.partial_path("port_trace.csv")).unwrap();
        let mut files = TraceFiles::open(&out, true, vec!["tor0-agg0".into()]).unwrap();
        for i in 0..10_000 {
            files.port(0, &sample(i));
            files.conn(&ConnSample { at: Time(i), conn: 0, window: None, in_flight: 0, rate_bps: None, acked_bytes: i });
        }
        let e = files.finish().unwrap_err();
        let msg = e.to_string();
        assert!(e.is_write_error() && msg.contains("port_trace.csv") && msg.contains("No space left on device"), "{msg}");
        let left: Vec<String> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(left, [super::super::out_dir::MANIFEST], "both temporary files removed");
        // A sink dropped unfinished (a run stopped) removes its files too.
        drop(TraceFiles::open(&out, true, vec!["x".into()]).unwrap());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }
}

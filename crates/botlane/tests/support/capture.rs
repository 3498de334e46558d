//! Every line a `tracing` subscriber writes, kept in memory, for the suites
//! that install the global subscriber and search its output (each in a
//! binary of its own), and for a test on one thread that sets its own
//! subscriber (`tracing::subscriber::set_default`).

use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing_subscriber::fmt::MakeWriter;

/// A writer that appends to a shared buffer; clones share it.
#[derive(Clone, Default)]
pub(crate) struct Capture(Arc<Mutex<Vec<u8>>>);

impl Capture {
    /// Installs the process's global `fmt` subscriber, at `level`, writing
    /// here (once per test binary: a second call panics).
    pub(crate) fn install(level: tracing::Level) -> Self {
        let capture = Self::default();
        tracing_subscriber::fmt()
            .with_max_level(level)
            .with_ansi(false)
            .with_writer(capture.clone())
            .try_init()
            .unwrap();
        capture
    }

    /// Everything written so far.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Capture {
    type Writer = Capture;
    fn make_writer(&'a self) -> Capture {
        self.clone()
    }
}

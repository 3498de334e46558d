//! Every line the process's global `tracing` subscriber writes, kept in
//! memory, for the suites that search the log; also behind a subscriber a
//! test on one thread sets for itself (`tracing::subscriber::set_default`).

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use tracing_subscriber::fmt::MakeWriter;

/// A writer that appends to a shared buffer; clones share it.
#[derive(Clone, Default)]
pub(crate) struct Capture(Arc<Mutex<Vec<u8>>>);

impl Capture {
    /// The capture behind the process's global `fmt` subscriber at TRACE
    /// (and the `log` bridge): the first call installs it, every test gets
    /// the same one.
    pub(crate) fn global() -> Self {
        static GLOBAL: OnceLock<Capture> = OnceLock::new();
        GLOBAL
            .get_or_init(|| {
                let capture = Self::default();
                tracing_subscriber::fmt()
                    .with_max_level(tracing::Level::TRACE)
                    .with_ansi(false)
                    .with_writer(capture.clone())
                    .try_init()
                    .expect("only Capture::global installs a global subscriber here");
                capture
            })
            .clone()
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

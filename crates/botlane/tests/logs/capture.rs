//! Every line the process's global `tracing` subscriber writes, kept in
//! memory, for the suites that search the log. Spans are written too, with
//! their fields, when they close, so a search of the text covers span
//! fields as well as events; and each closed span is kept whole
//! ([`ClosedSpan`]), for the tests that look at one span's fields.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

/// A writer that appends to a shared buffer; clones share it. Behind the
/// global subscriber, it also holds the spans that closed.
#[derive(Clone, Default)]
pub(crate) struct Capture {
    text: Arc<Mutex<Vec<u8>>>,
    spans: Arc<Mutex<Vec<ClosedSpan>>>,
}

/// A span as it closed: its name, its parent's, and every field it was
/// given (at its start or recorded later), each as its `Debug` text.
#[derive(Debug, Clone)]
pub(crate) struct ClosedSpan {
    pub(crate) name: &'static str,
    pub(crate) parent: Option<&'static str>,
    pub(crate) fields: BTreeMap<&'static str, String>,
}

impl Capture {
    /// The capture behind the process's global subscriber at TRACE (a
    /// `fmt` layer that also writes each span as it closes, the span
    /// keeper, and the `log` bridge): the first call installs it, every
    /// test gets the same one.
    pub(crate) fn global() -> Self {
        static GLOBAL: OnceLock<Capture> = OnceLock::new();
        GLOBAL
            .get_or_init(|| {
                let capture = Self::default();
                tracing_subscriber::registry()
                    .with(LevelFilter::TRACE)
                    .with(
                        tracing_subscriber::fmt::layer()
                            .with_ansi(false)
                            .with_span_events(FmtSpan::CLOSE)
                            .with_writer(capture.clone()),
                    )
                    .with(Spans(capture.spans.clone()))
                    .try_init()
                    .expect("only Capture::global installs a global subscriber here");
                capture
            })
            .clone()
    }

    /// Everything written so far.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.text.lock().unwrap()).into_owned()
    }

    /// The spans closed so far, in the order they closed.
    pub(crate) fn spans(&self) -> Vec<ClosedSpan> {
        self.spans.lock().unwrap().clone()
    }
}

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.text.lock().unwrap().extend_from_slice(buf);
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

/// The layer that keeps each span's fields until it closes.
struct Spans(Arc<Mutex<Vec<ClosedSpan>>>);

/// A span's fields so far (kept in its extensions).
#[derive(Default)]
struct Fields(BTreeMap<&'static str, String>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name(), format!("{value:?}"));
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<Fields>()
        {
            values.record(fields);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let fields = span.extensions_mut().remove::<Fields>().unwrap_or_default();
        self.0.lock().unwrap().push(ClosedSpan {
            name: span.name(),
            parent: span.parent().map(|parent| parent.name()),
            fields: fields.0,
        });
    }
}

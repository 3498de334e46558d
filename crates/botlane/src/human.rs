//! Durations in words, for error messages and disconnect reasons.

use std::time::Duration;

/// A duration in words: `30 s`, `400 ms`, `1.5 s`.
pub(crate) fn duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms >= 1000 && ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else if ms >= 1000 {
        format!("{:.1} s", d.as_secs_f64())
    } else if ms > 0 {
        format!("{ms} ms")
    } else {
        format!("{} µs", d.as_micros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_words() {
        assert_eq!(duration(Duration::from_secs(30)), "30 s");
        assert_eq!(duration(Duration::from_millis(400)), "400 ms");
        assert_eq!(duration(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(duration(Duration::from_micros(7)), "7 µs");
    }
}

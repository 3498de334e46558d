//! Runs every seed of the devserver's fuzz targets (`fuzz/corpus/<target>/`)
//! through the same check as the target, so the corpora run in `cargo test`
//! without a nightly toolchain.

use botlane::fuzzing::run_corpus;
use botlane_devserver::fuzzing::{
    check_config, check_realtime_frames, check_rest_requests, FramesRun, RequestsRun,
};

#[test]
fn realtime_frames_corpus() {
    let total: FramesRun = run_corpus("realtime_frames", check_realtime_frames)
        .into_iter()
        .sum();
    // The seeds reach every check: answers (refusals and successes),
    // closes, logins, and REST secrets whose absence from the records is
    // checked.
    assert!(total.handled >= 40, "{total:?}");
    assert!(total.answered >= 30, "{total:?}");
    assert!(total.accepted >= 20, "{total:?}");
    assert!(total.closed >= 5, "{total:?}");
    assert!(total.logins >= 10, "{total:?}");
    assert!(total.secrets >= 2, "{total:?}");
}

#[test]
fn realtime_frames_reach_a_logged_in_state() {
    let login = |token: &str| {
        format!(
            r#"0{{"op":10,"d":{{"token":"{token}","public_key":"CQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","client":"t"}}}}"#
        )
    };
    let mut input = login(botlane_devserver::fuzzing::FUZZ_BOT_TOKEN).into_bytes();
    input.push(botlane_devserver::fuzzing::FRAME_SEPARATOR);
    input.extend_from_slice(br#"0{"op":638,"d":{}}"#);
    let run = check_realtime_frames(&input);
    assert_eq!(
        run,
        FramesRun {
            handled: 2,
            answered: 2,
            accepted: 2,
            closed: 0,
            logins: 1,
            secrets: 1,
        }
    );
}

#[test]
fn devserver_config_corpus() {
    run_corpus("devserver_config", check_config);
}

#[test]
fn rest_requests_corpus() {
    let total: RequestsRun = run_corpus("rest_requests", check_rest_requests)
        .into_iter()
        .sum();
    // The seeds reach the checks: successes (a download among them),
    // refusals without the credential, and exchanges of the secret.
    assert!(total.answered >= 30, "{total:?}");
    assert!(total.ok >= 4, "{total:?}");
    assert!(total.unauthenticated >= 6, "{total:?}");
    assert!(total.exchanged >= 1, "{total:?}");
}

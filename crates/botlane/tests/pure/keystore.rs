//! The keystore file on disk: creation, persistence, atomic replacement,
//! permissions, refusal (without damage) of files it cannot read, the
//! integrity tag, temporary files left by killed processes, and the saver.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::proptest_cases::cases;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use botlane::crypto::{wrap_channel_key, ChannelKey};
use botlane::keystore::{Keystore, KeystoreError, Saver, SaverOptions};
use proptest::prelude::*;
use serde_json::Value;

fn store_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("keystore.json")
}

/// Writes `bytes` as a new owner-only file, the way a correct keystore is.
fn write_private(path: &Path, bytes: &[u8]) {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    std::io::Write::write_all(&mut options.open(path).unwrap(), bytes).unwrap();
}

/// The JSON document of a version 2 file (everything before the tag line).
fn read_json_body(path: &Path) -> Value {
    let bytes = fs::read(path).unwrap();
    let tag_line = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|b| *b == b'\n')
        .unwrap();
    assert!(bytes[tag_line + 1..].starts_with(b"hmac-sha256 "));
    serde_json::from_slice(&bytes[..=tag_line]).unwrap()
}

/// Every file in `dir` apart from the keystore itself and its (empty)
/// lock file.
fn leftovers(dir: &tempfile::TempDir) -> Vec<String> {
    fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "keystore.json" && name != ".keystore.json.lock")
        .collect()
}

#[test]
fn first_run_creates_an_identity_and_reopening_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let created = Keystore::open_or_create(&path).unwrap();
    assert!(path.is_file());
    let doc = read_json_body(&path);
    assert_eq!(doc["version"], 2);
    assert_eq!(doc["channels"], serde_json::json!({}));
    assert_eq!(
        doc["identity"]["public"],
        created.identity().public_key().to_base64()
    );
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));

    let reopened = Keystore::open_or_create(&path).unwrap();
    assert_eq!(
        reopened.identity().public_key(),
        created.identity().public_key()
    );
    // The reopened identity has the same secret: it can unwrap keys sent to the old one.
    let key = ChannelKey::generate().unwrap();
    let wrapped = wrap_channel_key(&key, &created.identity().public_key(), "c1").unwrap();
    let got = reopened
        .identity()
        .unwrap_channel_key(&wrapped, "c1")
        .unwrap();
    let wire = key.seal(b"ping", b"c1").unwrap();
    assert_eq!(got.open(&wire, b"c1").unwrap(), b"ping");
}

#[test]
fn relative_paths_work() {
    let dir = tempfile::tempdir().unwrap();
    let old = std::env::current_dir().unwrap();
    // Only this test changes the working directory, and restores it at once.
    std::env::set_current_dir(dir.path()).unwrap();
    let result = Keystore::open_or_create("keystore.json").and_then(|s| s.save());
    std::env::set_current_dir(old).unwrap();
    result.unwrap();
    assert!(store_path(&dir).is_file());
}

#[test]
fn channel_keys_persist_only_after_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut store = Keystore::open_or_create(&path).unwrap();
    let key = ChannelKey::generate().unwrap();
    let wire = key.seal(b"hello", b"room-1").unwrap();
    store.insert_channel_key("room-1", key);

    assert!(Keystore::open_or_create(&path)
        .unwrap()
        .channel_key("room-1")
        .is_none());

    store.save().unwrap();
    let reopened = Keystore::open_or_create(&path).unwrap();
    assert_eq!(reopened.channel_ids().collect::<Vec<_>>(), ["room-1"]);
    assert_eq!(
        reopened
            .channel_key("room-1")
            .unwrap()
            .open(&wire, b"room-1")
            .unwrap(),
        b"hello"
    );

    store.remove_channel_key("room-1").unwrap();
    store.save().unwrap();
    assert!(Keystore::open_or_create(&path)
        .unwrap()
        .channel_key("room-1")
        .is_none());
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

#[cfg(unix)]
#[test]
fn files_are_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut store = Keystore::open_or_create(&path).unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    store.insert_channel_key("c", ChannelKey::generate().unwrap());
    store.save().unwrap();
    assert_eq!(mode(&path), 0o600);
}

#[cfg(unix)]
#[test]
fn save_replaces_the_file_instead_of_rewriting_it() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut store = Keystore::open_or_create(&path).unwrap();
    let before = fs::read(&path).unwrap();
    let inode_before = fs::metadata(&path).unwrap().ino();
    // A reader that opened the old file keeps seeing it whole.
    let mut reader = fs::File::open(&path).unwrap();

    store.insert_channel_key("c", ChannelKey::generate().unwrap());
    store.save().unwrap();

    assert_ne!(fs::metadata(&path).unwrap().ino(), inode_before);
    let mut seen = Vec::new();
    reader.read_to_end(&mut seen).unwrap();
    assert_eq!(seen, before);
    assert_ne!(fs::read(&path).unwrap(), before);
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

#[test]
fn concurrent_first_runs_agree_on_one_identity() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let keys: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| Keystore::open_or_create(&path).unwrap()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap().identity().public_key())
            .collect()
    });
    assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
    assert_eq!(
        read_json_body(&path)["identity"]["public"],
        keys[0].to_base64()
    );
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

/// Opens a keystore whose file holds `bytes` and checks the file is left
/// exactly as it was.
fn open_bad(bytes: &[u8]) -> KeystoreError {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    write_private(&path, bytes);
    let err = Keystore::open_or_create(&path).unwrap_err();
    assert_eq!(fs::read(&path).unwrap(), bytes, "file changed after {err}");
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
    let message = err.to_string();
    assert!(
        message.contains(&path.display().to_string()),
        "message does not name the file: {message}"
    );
    assert!(message.starts_with(char::is_lowercase), "{message}");
    err
}

/// The JSON document of [`valid_bytes`].
fn valid_body() -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    write_private(&path, &valid_bytes());
    read_json_body(&path)
}

fn valid_bytes() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut store = Keystore::open_or_create(&path).unwrap();
    store.insert_channel_key("c1", ChannelKey::generate().unwrap());
    store.save().unwrap();
    fs::read(path).unwrap()
}

#[test]
fn corrupt_file_is_reported_and_left_alone() {
    let err = open_bad(b"\x00\x01 this is not json");
    assert!(matches!(err, KeystoreError::NotJson { .. }), "{err:?}");
    assert!(err.to_string().contains("not valid json"));
}

#[test]
fn truncated_file_is_reported_and_left_alone() {
    let valid = valid_bytes();
    let json_end = valid.iter().rposition(|b| *b == b'}').unwrap();
    for cut in [0, 1, valid.len() / 3, json_end] {
        let err = open_bad(&valid[..cut]);
        assert!(matches!(err, KeystoreError::Truncated { .. }), "{err:?}");
        assert!(err.to_string().contains("truncated"));
    }
    // Cut in the tag line: the integrity check names what is missing.
    for cut in [json_end + 1, json_end + 2, valid.len() - 3, valid.len() - 1] {
        let err = open_bad(&valid[..cut]);
        assert!(matches!(err, KeystoreError::Integrity { .. }), "{err:?}");
        assert!(err.to_string().contains("exactly one line"), "{err}");
    }
}

#[test]
fn wrong_version_is_reported_and_left_alone() {
    let mut doc = valid_body();
    doc["version"] = 3.into();
    let err = open_bad(doc.to_string().as_bytes());
    assert!(
        matches!(err, KeystoreError::UnsupportedVersion { found: 3, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("version 3"));
}

#[test]
fn damaged_key_is_reported_and_left_alone() {
    let mut doc = valid_body();
    let secret = doc["identity"]["secret"].as_str().unwrap().to_owned();
    doc["version"] = 1.into();
    doc["channels"]["c1"] = "AAAA".into();
    let err = open_bad(doc.to_string().as_bytes());
    let message = err.to_string();
    assert!(message.contains("channels[\"c1\"]"), "{message}");
    assert!(!message.contains(&secret));
}

#[cfg(unix)]
#[test]
fn loose_permissions_are_refused_and_left_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let bytes = valid_bytes();
    write_private(&path, &bytes);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    let err = Keystore::open_or_create(&path).unwrap_err();
    assert!(
        matches!(err, KeystoreError::Permissions { mode: 0o644, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("0644"), "{err}");
    assert_eq!(fs::read(&path).unwrap(), bytes);
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o644
    );
}

#[test]
fn a_directory_is_not_a_keystore() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    fs::create_dir(&path).unwrap();
    let err = Keystore::open_or_create(&path).unwrap_err();
    assert!(matches!(err, KeystoreError::NotAFile { .. }), "{err:?}");
    assert!(path.is_dir());
}

#[test]
fn a_path_without_a_file_name_is_refused_without_side_effects() {
    let dir = tempfile::tempdir().unwrap();
    for path in [PathBuf::new(), dir.path().join("..")] {
        let err = Keystore::open_or_create(&path).unwrap_err();
        assert!(matches!(err, KeystoreError::NotAFile { .. }), "{err:?}");
    }
    assert!(fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[cfg(unix)]
#[test]
fn a_symlink_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    write_private(&real, &valid_bytes());
    let link = store_path(&dir);
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let err = Keystore::open_or_create(&link).unwrap_err();
    assert!(matches!(err, KeystoreError::NotAFile { .. }), "{err:?}");
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn save_into_a_vanished_directory_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    fs::create_dir(&sub).unwrap();
    let path = sub.join("keystore.json");
    let store = Keystore::open_or_create(&path).unwrap();
    fs::remove_dir_all(&sub).unwrap();
    let err = store.save().unwrap_err();
    assert!(matches!(err, KeystoreError::Io { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.starts_with("cannot open the lock file of keystore"),
        "{message}"
    );
    assert!(message.contains("No such file or directory"), "{message}");
}

#[test]
fn debug_output_is_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut store = Keystore::open_or_create(&path).unwrap();
    store.insert_channel_key("c1", ChannelKey::generate().unwrap());
    store.save().unwrap();
    let doc = read_json_body(&path);
    let shown = format!("{store:?} {store:#?}");
    assert!(shown.contains("[REDACTED]"), "{shown}");
    assert!(shown.contains("c1"));
    for secret in [&doc["identity"]["secret"], &doc["channels"]["c1"]] {
        assert!(!shown.contains(secret.as_str().unwrap()), "{shown}");
    }
}

proptest! {
    // Each case writes and opens a file: fewer than the default 256.
    #![proptest_config(cases(64))]

    #[test]
    fn arbitrary_files_are_refused_without_damage(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        open_bad(&bytes);
    }

    #[test]
    fn arbitrary_text_files_are_refused_without_damage(text in "\\PC{0,200}") {
        log_case();
        open_bad(text.as_bytes());
    }
}

const CASE_LOG_ENV: &str = "BOTLANE_PROPTEST_CASE_LOG";

/// Appends a line to the file named by [`CASE_LOG_ENV`], when it is set:
/// how the test below counts the cases a property test runs.
fn log_case() {
    if let Some(log) = std::env::var_os(CASE_LOG_ENV) {
        let mut file = fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(log)
            .unwrap();
        std::io::Write::write_all(&mut file, b"case\n").unwrap();
    }
}

/// A property test runs `PROPTEST_CASES` cases when the variable is set
/// (a deep run) and its CI default otherwise.
#[test]
fn property_tests_obey_proptest_cases() {
    let dir = tempfile::tempdir().unwrap();
    for (requested, expected) in [(Some("7"), 7), (Some("300"), 300), (None, 64)] {
        let log = dir.path().join(format!("cases-{expected}"));
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "--exact",
                "keystore::arbitrary_text_files_are_refused_without_damage",
                "--test-threads=1",
                "--quiet",
            ])
            .env(CASE_LOG_ENV, &log)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        match requested {
            Some(n) => child.env("PROPTEST_CASES", n),
            None => child.env_remove("PROPTEST_CASES"),
        };
        assert!(child.status().unwrap().success());
        let ran = fs::read_to_string(&log).unwrap().lines().count();
        assert_eq!(ran, expected, "PROPTEST_CASES={requested:?}");
    }
}

/// The documentation, whose test vector 3 is checked below.
const CRYPTO_DOC: &str = include_str!("../../../../docs/crypto.md");

/// The exact file of test vector 3.
fn vector_file() -> &'static str {
    let section = &CRYPTO_DOC[CRYPTO_DOC.find("### Test vector 3").unwrap()..];
    let start = section.find("```text\n").unwrap() + "```text\n".len();
    let len = section[start..].find("```").unwrap();
    &section[start..start + len]
}

fn counting(start: u8) -> [u8; 32] {
    std::array::from_fn(|i| start + u8::try_from(i).unwrap())
}

fn hex32(text: &str) -> [u8; 32] {
    std::array::from_fn(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap())
}

#[test]
fn the_documented_vector_opens_checks_out_and_saves_back_byte_for_byte() {
    let file = vector_file();
    let secret = hex32("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");

    // The tag, computed from §4.1 with the RFC primitives, not botlane's code.
    let (body, tag_line) = file.split_at(file[..file.len() - 1].rfind('\n').unwrap() + 1);
    let hkdf = hkdf::Hkdf::<sha2::Sha256>::new(None, &secret);
    let mut key = [0u8; 32];
    hkdf.expand(b"botlane keystore tag v2", &mut key).unwrap();
    let mut mac = <hmac::Hmac<sha2::Sha256> as hmac::Mac>::new_from_slice(&key).unwrap();
    hmac::Mac::update(&mut mac, body.as_bytes());
    let tag = hmac::Mac::finalize(mac).into_bytes();
    assert_eq!(tag_line, format!("hmac-sha256 {}\n", BASE64.encode(tag)));

    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    write_private(&path, file.as_bytes());
    let store = Keystore::open_or_create(&path).unwrap();
    assert_eq!(
        store.identity().public_key().as_bytes(),
        &hex32("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
    );
    let odd_id = "room \"é\"\\\t\u{1}";
    assert_eq!(
        store.channel_ids().collect::<Vec<_>>(),
        ["channel-42", odd_id]
    );
    for (id, start) in [("channel-42", 0x20), (odd_id, 0x40)] {
        let wire = ChannelKey::from_bytes(counting(start))
            .seal(b"x", id.as_bytes())
            .unwrap();
        assert_eq!(
            store
                .channel_key(id)
                .unwrap()
                .open(&wire, id.as_bytes())
                .unwrap(),
            b"x"
        );
    }
    store.save().unwrap();
    assert_eq!(fs::read(&path).unwrap(), file.as_bytes());
}

/// Flips one byte of a valid file in every position, two ways, and opens
/// each result: none may open with other contents; with the version 2
/// format, none may open at all.
#[test]
fn every_single_byte_flip_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut store = Keystore::open_or_create(&path).unwrap();
    store.insert_channel_key("general", ChannelKey::generate().unwrap());
    store.insert_channel_key("dev \"ops\"/é", ChannelKey::generate().unwrap());
    store.insert_channel_key("42", ChannelKey::generate().unwrap());
    store.save().unwrap();
    let original = fs::read(&path).unwrap();
    let doc = read_json_body(&path);
    let mut secrets: Vec<String> = vec![doc["identity"]["secret"].as_str().unwrap().to_owned()];
    for value in doc["channels"].as_object().unwrap().values() {
        secrets.push(value.as_str().unwrap().to_owned());
    }

    let (mut refused, mut same, mut different) = (0, 0, 0);
    for at in 0..original.len() {
        for mask in [0x01u8, 0x20] {
            let mut bytes = original.clone();
            bytes[at] ^= mask;
            write_private(&path, &bytes);
            match Keystore::open_or_create(&path) {
                Err(err) => {
                    refused += 1;
                    let message = err.to_string();
                    assert!(message.contains(&path.display().to_string()), "{message}");
                    for secret in &secrets {
                        assert!(!message.contains(secret.as_str()), "{message}");
                    }
                    assert_eq!(
                        fs::read(&path).unwrap(),
                        bytes,
                        "file changed after {message}"
                    );
                }
                Ok(opened) => {
                    let identical = opened.identity().public_key() == store.identity().public_key()
                        && opened.channel_ids().eq(store.channel_ids())
                        && opened.channel_ids().all(|id| {
                            let wire = store.channel_key(id).unwrap().seal(b"probe", b"c").unwrap();
                            opened.channel_key(id).unwrap().open(&wire, b"c").is_ok()
                        });
                    if identical {
                        same += 1;
                    } else {
                        different += 1;
                    }
                }
            }
        }
    }
    assert_eq!(different, 0, "silent opens with other contents");
    assert_eq!(same, 0, "the format tolerates a changed byte");
    assert_eq!(refused, 2 * original.len());
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

#[test]
fn a_tampered_tag_says_the_integrity_check_failed() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut bytes = valid_bytes();
    let at = bytes.len() - 10;
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    write_private(&path, &bytes);
    let err = Keystore::open_or_create(&path).unwrap_err();
    assert!(matches!(err, KeystoreError::Integrity { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "keystore {} failed its integrity check: the tag does not match the content: \
             the file was changed or damaged after it was written",
            path.display()
        )
    );
    assert!(std::error::Error::source(&err).is_none());
}

#[test]
fn version_1_files_are_read_and_rewritten_as_version_2_on_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let secret = [0x11u8; 32];
    let public = botlane::crypto::IdentityKeyPair::from_secret_bytes(secret).public_key();
    let v1 = format!(
        "{{\n  \"version\": 1,\n  \"identity\": {{\n    \"secret\": \"{}\",\n    \"public\": \"{}\"\n  }},\n  \"channels\": {{\n    \"c1\": \"{}\"\n  }}\n}}\n",
        BASE64.encode(secret),
        public.to_base64(),
        BASE64.encode(counting(0x20)),
    );
    write_private(&path, v1.as_bytes());

    let mut store = Keystore::open_or_create(&path).unwrap();
    assert_eq!(store.identity().public_key(), public);
    assert_eq!(
        fs::read(&path).unwrap(),
        v1.as_bytes(),
        "opening does not rewrite"
    );
    store.insert_channel_key("c2", ChannelKey::from_bytes(counting(0x40)));
    store.save().unwrap();

    let doc = read_json_body(&path);
    assert_eq!(doc["version"], 2);
    assert_eq!(doc["channels"]["c1"], BASE64.encode(counting(0x20)));
    let reopened = Keystore::open_or_create(&path).unwrap();
    assert_eq!(reopened.identity().public_key(), public);
    assert_eq!(reopened.channel_ids().collect::<Vec<_>>(), ["c1", "c2"]);
}

#[test]
fn stale_temp_files_are_removed_on_open_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    write_private(&path, &valid_bytes());
    let stale = [".keystore.json.4242.0.tmp", ".keystore.json.1.17.tmp"];
    let kept = [
        ".keystore.json.tmp",
        ".keystore.json.1.2.tmp.bak",
        ".other.json.1.2.tmp",
    ];
    for name in stale.iter().chain(&kept) {
        write_private(&dir.path().join(name), b"a copy of key material");
    }
    Keystore::open_or_create(&path).unwrap();
    let mut left = leftovers(&dir);
    left.sort_unstable();
    let mut expected: Vec<String> = kept.iter().map(|s| (*s).to_owned()).collect();
    expected.sort_unstable();
    assert_eq!(left, expected);
}

#[test]
fn a_save_waits_for_another_holder_of_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut store = Keystore::open_or_create(&path).unwrap();
    let before = fs::read(&path).unwrap();
    let lock = fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join(".keystore.json.lock"))
        .unwrap();
    lock.lock().unwrap();
    store.insert_channel_key("c1", ChannelKey::generate().unwrap());
    std::thread::scope(|s| {
        let saving = s.spawn(|| store.save());
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(
            fs::read(&path).unwrap(),
            before,
            "saved while another process held the lock"
        );
        lock.unlock().unwrap();
        saving.join().unwrap().unwrap();
    });
    assert_ne!(fs::read(&path).unwrap(), before);
}

#[test]
fn a_failed_open_says_why_in_its_own_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing-dir").join("keystore.json");
    let err = Keystore::open_or_create(&path).unwrap_err();
    let message = err.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("No such file or directory"), "{message}");
    assert!(
        std::error::Error::source(&err).is_none(),
        "the reason would print twice"
    );
}

/// The child half of the SIGKILL test: saves forever, one more channel key
/// each time, on top of a few hundred filler keys so that each save takes
/// a while.
fn save_loop(path: &Path) {
    let mut store = Keystore::open_or_create(path).unwrap();
    let mut next = store.channel_ids().filter(|id| id.starts_with('k')).count();
    for filler in 0..300u32 {
        let key = ChannelKey::from_bytes([(filler % 256) as u8; 32]);
        store.insert_channel_key(format!("filler-{filler:03}"), key);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        store.insert_channel_key(
            format!("k{next:05}"),
            ChannelKey::from_bytes(counting_key(next)),
        );
        store.save().unwrap();
        next += 1;
        if next == 1 || !path.with_extension("ready").exists() {
            fs::write(path.with_extension("ready"), b"").unwrap();
        }
    }
}

fn counting_key(n: usize) -> [u8; 32] {
    [(n % 251) as u8; 32]
}

const SAVE_LOOP_ENV: &str = "BOTLANE_KEYSTORE_SAVE_LOOP";

/// Kills a process that saves in a loop (this test binary, run again as a
/// child) at varying moments, at least 24 times and until a kill has left
/// a temporary file behind; after each kill the next open must leave no
/// temporary file and find a complete old or new keystore.
#[cfg(unix)]
#[test]
fn sigkill_during_saves_leaves_no_stale_temp_file_after_the_next_open() {
    if let Some(path) = std::env::var_os(SAVE_LOOP_ENV) {
        save_loop(Path::new(&path));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let identity = Keystore::open_or_create(&path)
        .unwrap()
        .identity()
        .public_key();
    let ready = path.with_extension("ready");
    let (mut kills, mut stale_seen) = (0u32, 0usize);
    while kills < 24 || (stale_seen == 0 && kills < 300) {
        let _ = fs::remove_file(&ready);
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "keystore::sigkill_during_saves_leaves_no_stale_temp_file_after_the_next_open",
                "--test-threads=1",
                "--quiet",
            ])
            .env(SAVE_LOOP_ENV, &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while !ready.exists() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the child never saved"
            );
            assert!(
                child.try_wait().unwrap().is_none(),
                "the child exited early"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        // Different moments in the save cycle: 0 to 12 ms after a save.
        std::thread::sleep(Duration::from_micros(u64::from(kills % 25) * 500));
        child.kill().unwrap();
        child.wait().unwrap();
        kills += 1;
        let _ = fs::remove_file(&ready);

        stale_seen += leftovers(&dir)
            .iter()
            .filter(|n| n.ends_with(".tmp"))
            .count();
        let store = Keystore::open_or_create(&path).unwrap();
        assert!(
            leftovers(&dir).is_empty(),
            "after kill {kills}: {:?}",
            leftovers(&dir)
        );
        assert_eq!(store.identity().public_key(), identity);
        // A complete keystore: the fillers and keys k0..kN without a gap.
        let progress: Vec<&str> = store
            .channel_ids()
            .filter(|id| id.starts_with('k'))
            .collect();
        for (n, id) in progress.iter().enumerate() {
            assert_eq!(*id, format!("k{n:05}"));
            let wire = ChannelKey::from_bytes(counting_key(n))
                .seal(b"k", b"c")
                .unwrap();
            assert!(
                store.channel_key(id).unwrap().open(&wire, b"c").is_ok(),
                "{id}"
            );
        }
        let fillers = store
            .channel_ids()
            .filter(|id| id.starts_with("filler-"))
            .count();
        assert!(
            fillers == 300 || (fillers == 0 && progress.is_empty()),
            "{fillers}"
        );
    }
    assert!(stale_seen > 0, "no kill in {kills} landed inside a save");
}

/// 5,000 keys arriving within one window are written a handful of times,
/// not 5,000: the count is bounded by the time the inserts took.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_5000_keys_costs_a_few_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let window = Duration::from_secs(1);
    let saver = Saver::open(&path, SaverOptions::default().window(window))
        .await
        .unwrap();
    let started = Instant::now();
    for n in 0..5000u32 {
        let key = ChannelKey::from_bytes([(n % 256) as u8; 32]);
        saver.insert(format!("channel-{n:04}"), key).unwrap();
    }
    let took = started.elapsed();
    saver.flush().await.unwrap();
    let writes = saver.writes();
    // One write per window the inserts spanned, plus the flush.
    let bound = took.as_secs() + 2;
    assert!(
        (1..=bound).contains(&writes),
        "{writes} writes for 5000 keys in {took:?}"
    );

    let on_disk = Keystore::open_or_create(&path).unwrap();
    assert_eq!(on_disk.channel_ids().count(), 5000);
    assert_eq!(
        on_disk.identity().public_key(),
        saver.identity().public_key()
    );
    let wire = ChannelKey::from_bytes([(4321 % 256) as u8; 32])
        .seal(b"x", b"c")
        .unwrap();
    assert!(on_disk
        .channel_key("channel-4321")
        .unwrap()
        .open(&wire, b"c")
        .is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saver_writes_its_changes_when_the_window_ends_without_a_flush() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let saver = Saver::open(
        &path,
        SaverOptions::default().window(Duration::from_millis(50)),
    )
    .await
    .unwrap();
    saver.insert("c1", ChannelKey::generate().unwrap()).unwrap();
    let started = Instant::now();
    while saver.writes() == 0 {
        assert!(started.elapsed() < Duration::from_secs(20), "never written");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let on_disk = Keystore::open_or_create(&path).unwrap();
    assert_eq!(on_disk.channel_ids().collect::<Vec<_>>(), ["c1"]);
    assert_eq!(saver.writes(), 1);
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

#[tokio::test]
async fn a_saver_open_failure_names_the_file_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    write_private(&path, b"{\"version\": 7}");
    let err = Saver::open(&path, SaverOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "keystore {} has version 7; this build reads versions 1 and 2 only",
            path.display()
        )
    );
}

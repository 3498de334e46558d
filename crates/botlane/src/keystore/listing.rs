//! The names in a keystore directory that may be temporary files, listed
//! once and reused for as long as the directory has not changed.
//!
//! Opening a keystore looks for the temporary files a killed process left
//! behind, which takes a listing of its directory. A hosting platform
//! keeps a thousand keystores in one directory: one listing per open made
//! logging in its bots quadratic (3 ms per open at 1,000 keystores, against
//! 0.2 ms for a keystore alone in its directory). A directory's
//! modification time changes whenever an entry is added, removed or
//! renamed in it, so a listing stays complete while that time is the one
//! it was taken at. A listing taken within [`RACY`] of that time is not
//! reused: a change in the same tick of a coarse filesystem clock would
//! leave the time as it was.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use crate::sync::lock;

/// How much older than the listing the directory's time must be for the
/// listing to be reused: above any filesystem's timestamp granularity.
const RACY: Duration = Duration::from_secs(2);

/// The most directories remembered; beyond it the oldest is forgotten.
const MAX_DIRECTORIES: usize = 64;

struct Listing {
    dir: PathBuf,
    modified: SystemTime,
    /// Every name that starts with `.` and ends with `.tmp`: a superset of
    /// the temporary files of every keystore in the directory.
    candidates: Vec<OsString>,
}

static LISTINGS: Mutex<Vec<Listing>> = Mutex::new(Vec::new());

/// The names in `dir` that may be temporary files, from the last listing
/// if the directory has not changed since, else from a new one.
pub(super) fn temp_candidates(dir: &Path) -> io::Result<Vec<OsString>> {
    let modified = fs::metadata(dir).and_then(|m| m.modified()).ok();
    if let Some(modified) = modified {
        let listings = lock(&LISTINGS);
        if let Some(listing) = listings
            .iter()
            .find(|l| l.dir == dir && l.modified == modified)
        {
            return Ok(listing.candidates.clone());
        }
    }
    let mut candidates = Vec::new();
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name();
        let bytes = name.as_encoded_bytes();
        if bytes.starts_with(b".") && bytes.ends_with(b".tmp") {
            candidates.push(name);
        }
    }
    let settled = modified.filter(|m| {
        SystemTime::now()
            .duration_since(*m)
            .is_ok_and(|age| age > RACY)
    });
    let mut listings = lock(&LISTINGS);
    listings.retain(|l| l.dir != dir);
    if let Some(modified) = settled {
        if listings.len() >= MAX_DIRECTORIES {
            listings.remove(0);
        }
        listings.push(Listing {
            dir: dir.to_path_buf(),
            modified,
            candidates: candidates.clone(),
        });
    }
    Ok(candidates)
}

/// Forgets the listing of `dir` (after removing files from it).
pub(super) fn forget(dir: &Path) {
    lock(&LISTINGS).retain(|l| l.dir != dir);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn set_modified(dir: &Path, ago: Duration) {
        let time = SystemTime::now() - ago;
        fs::File::open(dir).unwrap().set_modified(time).unwrap();
    }

    #[test]
    fn a_settled_directory_is_listed_once_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(".k.json.1.2.tmp"), b"").unwrap();
        fs::write(dir.path().join("k.json"), b"").unwrap();
        set_modified(dir.path(), Duration::from_secs(60));
        let modified = fs::metadata(dir.path()).unwrap().modified().unwrap();
        assert_eq!(temp_candidates(dir.path()).unwrap(), [".k.json.1.2.tmp"]);

        // The same modification time (put back on purpose after a removal):
        // the remembered listing, not a new one.
        fs::remove_file(dir.path().join(".k.json.1.2.tmp")).unwrap();
        fs::File::open(dir.path())
            .unwrap()
            .set_modified(modified)
            .unwrap();
        assert_eq!(temp_candidates(dir.path()).unwrap(), [".k.json.1.2.tmp"]);

        // A new entry changes the time: listed again.
        fs::write(dir.path().join(".k.json.3.4.tmp"), b"").unwrap();
        assert_eq!(temp_candidates(dir.path()).unwrap(), [".k.json.3.4.tmp"]);
    }

    #[test]
    fn a_directory_changed_just_now_is_listed_every_time() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(".k.json.1.2.tmp"), b"").unwrap();
        assert_eq!(temp_candidates(dir.path()).unwrap().len(), 1);
        let modified = fs::metadata(dir.path()).unwrap().modified().unwrap();
        fs::remove_file(dir.path().join(".k.json.1.2.tmp")).unwrap();
        // Even with the time put back, a racy listing was not kept.
        fs::File::open(dir.path())
            .unwrap()
            .set_modified(modified)
            .unwrap();
        assert!(temp_candidates(dir.path()).unwrap().is_empty());
    }
}

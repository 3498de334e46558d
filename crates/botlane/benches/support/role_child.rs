//! A bench's helper process: this executable again, run for one role that
//! an environment variable names, so that what the bench measures in its
//! own process is not mixed with the other side's work. The two speak in
//! lines: the child's stdout to the bench ([`RoleChild::line`]), the
//! bench's writes to the child's stdin. Closing its stdin ends the child.

use std::io::{BufRead, BufReader, Lines, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a child gets to end once its stdin is closed before it is
/// killed: a devserver of a thousand bots shuts down well within it.
const END_WITHIN: Duration = Duration::from_secs(30);

pub(crate) struct RoleChild {
    child: Child,
    /// `None` once closed, at drop.
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl RoleChild {
    /// Runs this executable with `role` set to `value` in its environment.
    pub(crate) fn spawn(role: &str, value: &str) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(role, value)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        Self {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().unwrap()).lines(),
            child,
        }
    }

    /// The child's next line of stdout.
    pub(crate) fn line(&mut self) -> String {
        self.stdout
            .next()
            .expect("the role child writes a line before it ends")
            .unwrap()
    }

    /// The child's process id.
    #[allow(dead_code)] // Read by the scale bench only.
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }
}

/// Writes go to the child's stdin.
impl Write for RoleChild {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.stdin
            .as_mut()
            .expect("stdin is closed only at drop")
            .write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.stdin
            .as_mut()
            .expect("stdin is closed only at drop")
            .flush()
    }
}

impl Drop for RoleChild {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + END_WITHIN;
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        // A no-op for a child that has ended (its status is kept): only a
        // hung one is killed.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

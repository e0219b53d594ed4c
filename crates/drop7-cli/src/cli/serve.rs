//! `drop7 serve`: the web page (web/dist, embedded in the binary at build
//! time) over plain HTTP on 127.0.0.1, std only. GET and HEAD of the page's
//! files; anything else gets a short error status. One thread a connection,
//! at most [`MAX_CONNECTIONS`] at once (past that, `503`).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;

/// Options of `drop7 serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// TCP port on 127.0.0.1 (0 = any free port; the URL printed names it).
    #[arg(
        long,
        default_value_t = 7700,
        value_name = "P",
        allow_negative_numbers = true
    )]
    pub port: u16,
}

/// The embedded page: (URL path, content type, bytes). Built by
/// `scripts/build-web.sh`; `serve_every_dist_file` in the CLI tests checks that
/// every file of web/dist is listed here.
pub const ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "/index.html",
        HTML,
        include_bytes!("../../../../web/dist/index.html"),
    ),
    (
        "/style.css",
        CSS,
        include_bytes!("../../../../web/dist/style.css"),
    ),
    (
        "/main.js",
        JS,
        include_bytes!("../../../../web/dist/main.js"),
    ),
    (
        "/board.js",
        JS,
        include_bytes!("../../../../web/dist/board.js"),
    ),
    (
        "/advisor.js",
        JS,
        include_bytes!("../../../../web/dist/advisor.js"),
    ),
    (
        "/worker.js",
        JS,
        include_bytes!("../../../../web/dist/worker.js"),
    ),
    (
        "/types.js",
        JS,
        include_bytes!("../../../../web/dist/types.js"),
    ),
    (
        "/pkg/drop7_web.js",
        JS,
        include_bytes!("../../../../web/dist/pkg/drop7_web.js"),
    ),
    (
        "/pkg/drop7_web_bg.wasm",
        WASM,
        include_bytes!("../../../../web/dist/pkg/drop7_web_bg.wasm"),
    ),
];

const HTML: &str = "text/html; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const WASM: &str = "application/wasm";

/// The path of a request target: itself (origin form, `/main.js?x`), or
/// the path of an absolute-form target (`http://host:port/main.js`, as sent
/// to a proxy; RFC 9112 §3.2.2), `/` if it has none. `None` for an
/// absolute form without a host (a bad request).
pub fn target_path(target: &str) -> Option<&str> {
    match target.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => {
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            // The host: after any user info, before any port ([…] for IPv6).
            let host = rest[..end].rsplit('@').next().unwrap_or("");
            let host = match host.strip_prefix('[') {
                Some(v6) => v6.split(']').next().unwrap_or(""),
                None => host.split(':').next().unwrap_or(""),
            };
            if host.is_empty() {
                return None;
            }
            Some(match &rest[end..] {
                p if p.starts_with('/') => p,
                _ => "/",
            })
        }
        _ => Some(target),
    }
}

/// The asset at a request path (`/` is the page; a query string is ignored;
/// percent-escapes are decoded first, so `/main%2Ejs` is `/main.js`, RFC 3986
/// §2.1). `Err` for a path with a malformed escape (`%` not followed by two
/// hex digits), `Ok(None)` for a path that names no asset.
pub fn asset(path: &str) -> Result<Option<Asset>, BadEscape> {
    let path = path.split(['?', '#']).next().unwrap_or("");
    if !path.starts_with('/') {
        // Not origin form (`*`, `main.js`, `%2Fmain.js`): no asset.
        return Ok(None);
    }
    let decoded = percent_decoded(path)?;
    let path = if decoded == b"/" {
        &b"/index.html"[..]
    } else {
        &decoded[..]
    };
    Ok(ASSETS
        .iter()
        .find(|(p, _, _)| p.as_bytes() == path)
        .map(|&(_, t, b)| (t, b)))
}

/// An embedded file: (content type, bytes).
pub type Asset = (&'static str, &'static [u8]);

/// A request path with a `%` not followed by two hex digits.
#[derive(Debug, PartialEq, Eq)]
pub struct BadEscape;

/// `path` with every `%XX` escape replaced by its byte.
fn percent_decoded(path: &str) -> Result<Vec<u8>, BadEscape> {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let digit = |k: usize| {
                bytes
                    .get(k)
                    .and_then(|&b| char::from(b).to_digit(16))
                    .ok_or(BadEscape)
            };
            out.push((digit(i + 1)? * 16 + digit(i + 2)?) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// How a request line's HTTP version is answered: `None` for HTTP/1.0 and
/// HTTP/1.1 (served), else the status and body of the refusal: `505` for
/// another `HTTP/x.y`, `400` for anything else or none (RFC 9112 §2.3, §3).
pub fn version_refusal(version: Option<&str>) -> Option<(&'static str, &'static [u8])> {
    let Some(version) = version else {
        return Some((
            "400 Bad Request",
            b"bad request: the request line has no HTTP version (GET /path HTTP/1.1)\n",
        ));
    };
    match version.strip_prefix("HTTP/").map(|v| v.as_bytes()) {
        Some(b"1.0" | b"1.1") => None,
        Some([major, b'.', minor]) if major.is_ascii_digit() && minor.is_ascii_digit() => Some((
            "505 HTTP Version Not Supported",
            b"only HTTP/1.0 and HTTP/1.1\n",
        )),
        _ => Some((
            "400 Bad Request",
            b"bad request: not an HTTP version (HTTP/1.1)\n",
        )),
    }
}

/// Runs `drop7 serve` until interrupted.
pub fn run(args: &ServeArgs) -> Result<()> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    let listener = match TcpListener::bind(addr) {
        Err(e) if e.kind() == io::ErrorKind::AddrInUse => anyhow::bail!(
            "cannot listen on {addr}: the port is in use (another drop7 serve?); \
             pick another with --port P (--port 0: any free port)"
        ),
        r => r.with_context(|| format!("cannot listen on {addr}"))?,
    };
    let port = listener.local_addr().context("local address")?.port();
    // (A failed write is an error, not a panic: `serve > /dev/full`.)
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "drop7 serving the page at http://127.0.0.1:{port}/ (Ctrl-C stops)"
    )
    .and_then(|()| out.flush())
    .context("writing to stdout")?;
    drop(out);
    let live = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        match stream {
            Ok(mut s) => {
                // One thread per connection, at most MAX_CONNECTIONS at once:
                // past that (or when no thread can be started) the client
                // gets a 503 at once, and the server goes on.
                if live.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                    live.fetch_sub(1, Ordering::SeqCst);
                    busy(&mut s);
                    continue;
                }
                let slot = Slot(Arc::clone(&live));
                let spare = s.try_clone();
                let started = std::thread::Builder::new()
                    .name("drop7-serve".into())
                    .spawn(move || {
                        let _slot = slot;
                        let _ = handle(s);
                    });
                if let Err(e) = started {
                    eprintln!("drop7 serve: cannot start a thread for a connection: {e}");
                    if let Ok(mut s) = spare {
                        busy(&mut s);
                    }
                }
            }
            Err(e) => eprintln!("drop7 serve: accept failed: {e}"),
        }
    }
    Ok(())
}

/// Most connections served at once (each has its own thread for at most
/// the request deadline plus the write timeout).
pub const MAX_CONNECTIONS: usize = 64;

/// A connection's place among the `MAX_CONNECTIONS`, given back when its
/// thread ends (or when the thread could not start).
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Answers 503 on the accepting thread, so briefly: the request's first
/// bytes are read (for at most 50 ms; closing on unread bytes would reset
/// the connection before the client reads the answer), the answer is
/// written with a 1 s timeout, and the connection is shut down.
fn busy(s: &mut TcpStream) {
    let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
    let _ = s.read(&mut [0u8; 16 * 1024]);
    let _ = s.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = respond(
        s,
        "503 Service Unavailable",
        "text/plain",
        b"too many connections; try again\n",
        false,
    );
    let _ = s.shutdown(std::net::Shutdown::Write);
}

fn respond(
    s: &mut TcpStream,
    status: &str,
    ctype: &str,
    body: &[u8],
    head: bool,
) -> io::Result<()> {
    let header = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\
         Cache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(header.as_bytes())?;
    if !head {
        s.write_all(body)?;
    }
    s.flush()
}

/// Answers a request refused before its end, then reads what is left of it
/// for a moment: closing on unread bytes would reset the connection before
/// the client reads the answer.
fn refuse(s: &mut TcpStream, status: &str, body: &[u8], head: bool) -> io::Result<()> {
    let answer = respond(s, status, "text/plain", body, head);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
    let mut rest = [0u8; 16 * 1024];
    for _ in 0..64 {
        if !matches!(s.read(&mut rest), Ok(n) if n > 0) {
            break;
        }
    }
    answer
}

/// The bytes of a request read (line and headers); a request line that
/// fills them gets `414 URI Too Long`.
const REQUEST_CAP: u64 = 16 * 1024;

/// Time a client has to send its whole request (line and headers).
const REQUEST_DEADLINE: Duration = Duration::from_secs(10);

/// The answer to a request not whole by [`REQUEST_DEADLINE`].
const TIMEOUT: (&str, &[u8]) = (
    "408 Request Timeout",
    b"request not received in time (10 s)\n",
);

/// Whether a read failed for want of time: [`Deadline`]'s own error, or
/// the socket's read timeout (`WouldBlock` on Unix).
fn timed_out(kind: io::ErrorKind) -> bool {
    matches!(kind, io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock)
}

/// The connection read against one deadline for the whole request: a client
/// that trickles a byte at a time cannot hold its thread for longer (a
/// per-read timeout alone let 16 KiB sent a byte every 9 s last 40 hours).
struct Deadline {
    s: TcpStream,
    until: Instant,
}

impl Read for Deadline {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "request not received in time",
            ));
        }
        self.s.set_read_timeout(Some(left))?;
        self.s.read(buf)
    }
}

fn handle(mut s: TcpStream) -> io::Result<()> {
    s.set_write_timeout(Some(Duration::from_secs(30)))?;
    let conn = Deadline {
        s: s.try_clone()?,
        until: Instant::now() + REQUEST_DEADLINE,
    };
    let mut reader = BufReader::new(conn).take(REQUEST_CAP);
    // Bytes first, so that a line cut by the cap inside a UTF-8 character
    // is still the too-long line it is.
    let mut raw = Vec::new();
    let read = reader.read_until(b'\n', &mut raw);
    let head = raw.starts_with(b"HEAD ");
    if read.is_ok() && !raw.ends_with(b"\n") && raw.len() as u64 == REQUEST_CAP {
        // A shared link of a very long game (a digit a move).
        return refuse(
            &mut s,
            "414 URI Too Long",
            b"request line of 16 KiB or more: a shared link of a game this long (more than \
              about 16,000 moves) cannot be opened here; replay the game's tape or trace instead\n",
            head,
        );
    }
    let line = match String::from_utf8(raw) {
        Ok(line) if read.is_ok() && line.ends_with('\n') => line,
        _ if read.as_ref().is_err_and(|e| timed_out(e.kind())) => {
            return refuse(&mut s, TIMEOUT.0, TIMEOUT.1, head);
        }
        _ => return refuse(&mut s, "400 Bad Request", b"bad request\n", head),
    };
    // Skip the headers (bounded by the 16 KiB cap above), as bytes: a
    // header value may hold any byte from 0x80 up (a Latin-1 cookie).
    let mut h = Vec::new();
    let mut failed = None;
    let ended = loop {
        h.clear();
        match reader.read_until(b'\n', &mut h) {
            Ok(0) => break false,
            Ok(_) if h == b"\r\n" || h == b"\n" => break true,
            Ok(_) => {}
            Err(e) => {
                failed = Some(e.kind());
                break false;
            }
        }
    };
    if !ended {
        // Answered, not served: the client is still sending (or stopped
        // sending) a request that is not whole; a 200 on top of unread
        // bytes would reset the connection before the client read it.
        if reader.limit() == 0 {
            return refuse(
                &mut s,
                "431 Request Header Fields Too Large",
                b"request line and headers of 16 KiB or more\n",
                head,
            );
        }
        match failed {
            Some(kind) if timed_out(kind) => return refuse(&mut s, TIMEOUT.0, TIMEOUT.1, head),
            Some(_) => return refuse(&mut s, "400 Bad Request", b"bad request\n", head),
            // The client closed its sending side before the blank line:
            // served as it is.
            None => {}
        }
    }
    let mut parts = line.split_whitespace();
    let (method, path, version) = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(p), v, None) => (m, p, v),
        _ => {
            return respond(
                &mut s,
                "400 Bad Request",
                "text/plain",
                b"bad request\n",
                false,
            );
        }
    };
    let head = method == "HEAD";
    if method != "GET" && !head {
        return respond(
            &mut s,
            "405 Method Not Allowed",
            "text/plain",
            b"only GET and HEAD\n",
            false,
        );
    }
    if let Some((status, body)) = version_refusal(version) {
        return respond(&mut s, status, "text/plain", body, head);
    }
    let Some(path) = target_path(path) else {
        return respond(
            &mut s,
            "400 Bad Request",
            "text/plain",
            b"bad request\n",
            head,
        );
    };
    match asset(path) {
        Ok(Some((ctype, body))) => respond(&mut s, "200 OK", ctype, body, head),
        Ok(None) => respond(&mut s, "404 Not Found", "text/plain", b"not found\n", head),
        Err(BadEscape) => respond(
            &mut s,
            "400 Bad Request",
            "text/plain",
            b"bad request: a % in the path not followed by two hex digits\n",
            head,
        ),
    }
}

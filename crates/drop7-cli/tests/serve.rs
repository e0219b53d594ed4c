//! `drop7 serve`: prints its URL, serves every file of web/dist byte for byte
//! with the right content type, `?query` ignored; 404, 405 and 400 for the
//! rest; a port already in use is a one-line error.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

struct Server(Child, u16);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve() -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_drop7"))
        .args(["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("drop7 serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no URL in {line:?}"));
    Server(child, port)
}

/// Sends raw request bytes; returns (status line, headers, body).
fn request(port: u16, raw: &[u8]) -> (String, String, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(raw).unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let split = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(all[..split].to_vec()).unwrap();
    let (status, headers) = head.split_once("\r\n").unwrap_or((&head, ""));
    (
        status.to_string(),
        headers.to_string(),
        all[split + 4..].to_vec(),
    )
}

fn get(port: u16, path: &str) -> (String, String, Vec<u8>) {
    request(
        port,
        format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes(),
    )
}

fn dist() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web/dist")
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn serves_every_dist_file() {
    let srv = serve();
    let (status, headers, body) = get(srv.1, "/?seed=0x2c&moves=33");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(headers.contains("Content-Type: text/html"), "{headers}");
    assert_eq!(body, std::fs::read(dist().join("index.html")).unwrap());
    let mut all = Vec::new();
    files(&dist(), &mut all);
    let mut served = 0;
    for f in all {
        let rel = f
            .strip_prefix(dist())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel.ends_with(".d.ts") {
            continue; // type declarations of the build, not used by the page
        }
        let (status, headers, body) = get(srv.1, &format!("/{rel}"));
        assert_eq!(status, "HTTP/1.1 200 OK", "/{rel}");
        assert_eq!(body, std::fs::read(&f).unwrap(), "/{rel}");
        let want = match f.extension().and_then(|e| e.to_str()) {
            Some("wasm") => "application/wasm",
            Some("js") => "text/javascript",
            Some("css") => "text/css",
            _ => "text/html",
        };
        assert!(headers.contains(want), "/{rel}: {headers}");
        served += 1;
    }
    assert!(served >= 8, "{served}");
}

#[test]
fn errors_and_head() {
    let srv = serve();
    assert!(get(srv.1, "/nope.js").0.contains("404"));
    assert!(get(srv.1, "/../Cargo.toml").0.contains("404"));
    // The absolute form (as sent to a proxy) names the same files.
    let (status, _, body) = get(srv.1, &format!("http://127.0.0.1:{}/main.js", srv.1));
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(body, std::fs::read(dist().join("main.js")).unwrap());
    let (status, _, body) = get(srv.1, "HTTP://x?seed=1");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(body, std::fs::read(dist().join("index.html")).unwrap());
    assert!(get(srv.1, "ftp://x/main.js").0.contains("404"));
    for target in ["http://u:p@h:1/main.js", "http://[::1]:7700/main.js"] {
        assert_eq!(get(srv.1, target).0, "HTTP/1.1 200 OK", "{target}");
    }
    // Its authority ends at the path, query or fragment; it has a host.
    for target in ["http://x?next=/main.js", "http://x#/main.js"] {
        let (status, _, body) = get(srv.1, target);
        assert_eq!(status, "HTTP/1.1 200 OK", "{target}");
        assert_eq!(body, std::fs::read(dist().join("index.html")).unwrap());
    }
    for target in [
        "http://",
        "http:///main.js",
        "http://:80/main.js",
        "http://u@/main.js",
        "http://[]/",
    ] {
        assert!(get(srv.1, target).0.contains("400"), "{target}");
    }
    let (status, headers, body) = request(srv.1, b"HEAD /main.js HTTP/1.1\r\n\r\n");
    assert!(status.contains("200"));
    assert!(headers.contains("Content-Length: "));
    assert!(body.is_empty());
    assert!(request(srv.1, b"POST / HTTP/1.1\r\n\r\n").0.contains("405"));
    assert!(request(srv.1, b"\r\n\r\n").0.contains("400"));
    // HTTP/1.0 and 1.1 only; a line without a version (HTTP/0.9) or with
    // more than three parts is a bad request.
    let (status, _, body) = request(srv.1, b"GET / HTTP/1.0\r\n\r\n");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(body, std::fs::read(dist().join("index.html")).unwrap());
    for (line, want) in [
        (
            &b"GET / HTTP/2.0\r\n\r\n"[..],
            "505 HTTP Version Not Supported",
        ),
        (b"GET / HTTP/3.1\r\n\r\n", "505 HTTP Version Not Supported"),
        (b"GET /\r\n\r\n", "400 Bad Request"),
        (b"GET / FTP/1.1\r\n\r\n", "400 Bad Request"),
        (b"GET / HTTP/1.1 x\r\n\r\n", "400 Bad Request"),
        (b"GET / HTTP/11\r\n\r\n", "400 Bad Request"),
    ] {
        let (status, _, body) = request(srv.1, line);
        assert_eq!(status, format!("HTTP/1.1 {want}"), "{line:?}");
        assert!(!body.is_empty(), "{line:?}");
    }
    // Percent-escapes in the path are decoded (RFC 3986 §2.1); a malformed
    // one is a bad request.
    for target in ["/main%2Ejs", "/main%2ejs?x=%zz", "/%69ndex.html"] {
        assert_eq!(get(srv.1, target).0, "HTTP/1.1 200 OK", "{target}");
    }
    for target in ["/%2E%2E/Cargo.toml", "%2Fmain.js", "main.js"] {
        assert!(get(srv.1, target).0.contains("404"), "{target}");
    }
    for target in ["/main%2", "/main%zzjs", "/%", "/%%41"] {
        let (status, _, body) = get(srv.1, target);
        assert_eq!(status, "HTTP/1.1 400 Bad Request", "{target}");
        assert!(
            String::from_utf8_lossy(&body).contains("hex digits"),
            "{target}"
        );
    }
    // A shared link of a game of 20,000 moves: too long, and said so (the
    // rest of the request is read, so the answer arrives before the close).
    let long = format!("/?seed=1&moves={}", "3".repeat(20_000));
    let (status, _, body) = get(srv.1, &long);
    assert_eq!(status, "HTTP/1.1 414 URI Too Long");
    assert!(
        String::from_utf8_lossy(&body).starts_with("request line of 16 KiB or more: a shared link"),
        "{body:?}"
    );
    // Cut by the cap inside a UTF-8 character, and as HEAD (no body).
    let cut = format!(
        "GET /?{}é{} HTTP/1.1\r\n\r\n",
        "a".repeat(16_377),
        "b".repeat(100)
    );
    assert_eq!(
        request(srv.1, cut.as_bytes()).0,
        "HTTP/1.1 414 URI Too Long"
    );
    let (status, _, body) = request(srv.1, format!("HEAD {long} HTTP/1.1\r\n\r\n").as_bytes());
    assert_eq!(status, "HTTP/1.1 414 URI Too Long");
    assert!(body.is_empty());
    // A short request line with 17 KB of headers (cookies): refused and
    // said so, the rest read (it was a 200 reset by the close).
    let cookies = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nCookie: {}\r\n\r\n",
        "c".repeat(17_000)
    );
    let (status, _, body) = request(srv.1, cookies.as_bytes());
    assert_eq!(status, "HTTP/1.1 431 Request Header Fields Too Large");
    assert_eq!(body, b"request line and headers of 16 KiB or more\n");
    // A header value with a byte that is no UTF-8 (a Latin-1 cookie): served.
    let latin1 = b"GET / HTTP/1.1\r\nHost: x\r\nX-Name: caf\xe9\r\n\r\n";
    assert!(request(srv.1, latin1).0.contains("200"));
    // Just under the cap: served.
    let fits = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nCookie: {}\r\n\r\n",
        "c".repeat(16_000)
    );
    assert!(request(srv.1, fits.as_bytes()).0.contains("200"));
    // A port in use: one error line, non-zero exit.
    let out = Command::new(env!("CARGO_BIN_EXE_drop7"))
        .args(["serve", "--port", &srv.1.to_string()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: cannot listen on 127.0.0.1:"),
        "{err}"
    );
    assert!(
        err.contains("the port is in use") && err.contains("--port"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// A client that trickles its request a byte at a time (each byte within the
/// per-read timeout) gets a 408 once the 10 s request deadline has passed,
/// not a thread held until it finishes (16 KiB at a byte a second); so does
/// one whose request line came whole but whose headers never end (it was
/// served a 200 after the deadline).
#[test]
fn a_trickled_request_meets_the_deadline() {
    let srv = serve();
    let unfinished = {
        let port = srv.1;
        std::thread::spawn(move || {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
            let mut all = Vec::new();
            let _ = s.read_to_end(&mut all);
            String::from_utf8_lossy(&all).into_owned()
        })
    };
    let mut s = TcpStream::connect(("127.0.0.1", srv.1)).unwrap();
    let start = std::time::Instant::now();
    let mut reader = s.try_clone().unwrap();
    let answer = std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = reader.read_to_end(&mut all);
        (all, start.elapsed())
    });
    // A request line that never ends, one byte per 0.5 s (for at most 20 s).
    for b in b"GET /index.html?".iter().chain(std::iter::repeat(&b'a')) {
        if s.write_all(&[*b]).is_err() || start.elapsed().as_secs() > 20 {
            break;
        }
        if answer.is_finished() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let (all, took) = answer.join().unwrap();
    let text = String::from_utf8_lossy(&all);
    assert!(text.starts_with("HTTP/1.1 408 Request Timeout"), "{text:?}");
    assert!(
        took.as_secs_f64() < 13.0,
        "answered after {took:?}: the request deadline is 10 s"
    );
    let text = unfinished.join().unwrap();
    assert!(text.starts_with("HTTP/1.1 408 Request Timeout"), "{text:?}");
}

/// At most 64 connections at once: with 64 idle ones open (each waiting
/// out its 10 s request deadline), the next gets 503 at once; once they
/// close, requests are served again.
#[test]
fn connections_past_the_cap_get_503() {
    let srv = serve();
    let idle: Vec<TcpStream> = (0..64)
        .map(|_| TcpStream::connect(("127.0.0.1", srv.1)).unwrap())
        .collect();
    // Let the server accept (and count) all of them.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (status, _, body) = get(srv.1, "/");
    assert_eq!(status, "HTTP/1.1 503 Service Unavailable");
    assert!(String::from_utf8_lossy(&body).contains("too many connections"));
    drop(idle);
    // The idle connections' threads see the close and end.
    let mut ok = false;
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        if get(srv.1, "/").0 == "HTTP/1.1 200 OK" {
            ok = true;
            break;
        }
    }
    assert!(ok, "no 200 after the idle connections closed");
}

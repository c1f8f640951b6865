//! Downloaders: the files `curl` and `wget` write, upload or read as
//! their options name them.

use super::sink::Sink;
use super::split::{option_arg, Split};
use crate::policy::capability::Capability::*;
use crate::shell::parse::Arg;

/// `curl`: outputs, uploads, config and cookie files its options name.
#[inline(never)]
pub(super) fn curl(s: &Split, sink: &mut Sink) {
    let ops = &s.operands;
    // -o names are relative to --output-dir when one is given.
    let out_dir = s.values(&["--output-dir"]).into_iter().next();
    for v in s.values(&["-o", "--output"]) {
        match (&out_dir, v.literal()) {
            (Some(Arg::Literal(d)), Some(o)) if !o.starts_with('/') && o != "-" => sink.fill(&Arg::Literal(format!("{}/{o}", d.trim_end_matches('/')))),
            (Some(d), _) if !d.text().is_empty() && !matches!(d, Arg::Literal(_)) => sink.computed(Create, format!("`{}` is computed", d.text())),
            _ => sink.fill(&option_arg("--output", &v)),
        }
    }
    if s.short('J') || s.has(&["--remote-header-name"]) {
        sink.unknown_names_in(out_dir.as_ref(), &[Create, Write], "curl -J names the file after the server's header");
    }
    for v in s.values(&["-c", "--cookie-jar", "-D", "--dump-header", "--trace", "--trace-ascii", "--stderr", "--libcurl", "--etag-save", "--hsts", "--alt-svc"]) {
        {
            sink.fill(&option_arg("--cookie-jar", &v));
        }
    }
    for v in s.values(&["-T", "--upload-file", "-K", "--config", "--netrc-file", "--cacert", "--capath", "-E", "--cert", "--key", "--proxy-cacert", "--proxy-cert", "--proxy-key", "--crlfile"]) {
        sink.path(&option_arg("--upload-file", &v), Read);
    }
    // A config read from standard input may name outputs and commands.
    if s.values(&["-K", "--config"]).iter().any(|v| v.text() == "-") {
        sink.opaque("curl reads its options from standard input (-K -), which may name files it writes".into());
    }
    curl_files_in_values(s, sink);
    // `file://` URLs are paths it reads.
    let urls = ops.iter().map(|a| (*a).clone()).chain(s.values(&["--url"]));
    for url in urls {
        if let Some(p) = url.literal().and_then(|t| t.strip_prefix("file://")) {
            let path = p.strip_prefix("localhost").unwrap_or(p);
            sink.path(&Arg::Literal(path.split(['?', '#']).next().unwrap_or("").to_string()), Read);
        }
    }
    if s.has(&["-O", "--remote-name", "--remote-name-all"]) || s.short('O') {
        let dir = s.values(&["--output-dir"]).first().map(|v| option_arg("--output-dir", &v));
        for url in ops {
            match url.literal().and_then(url_file_name) {
                Some(f) => {
                    let p = match &dir {
                        Some(Arg::Literal(d)) => format!("{d}/{f}"),
                        _ => f.to_string(),
                    };
                    sink.fill(&Arg::Literal(p));
                }
                None => sink.unknown_names_in(dir.as_ref(), &[Create, Write], "curl -O names the file after the URL"),
            }
        }
    }
}

/// The files curl's option values name by a sign: `-d @F`, `-F f=@F`,
/// `-F f=<F` (the contents as the field), `--json @F`, `-H @F`,
/// `--variable name@F`, a cookie file (`-b F`, no `=`), and
/// `-w '%output{F}'` (the write-out goes to F).
fn curl_files_in_values(s: &Split, sink: &mut Sink) {
    let read = |sink: &mut Sink, f: &str| {
        let f = f.split(';').next().unwrap_or("");
        if !f.is_empty() && f != "-" {
            sink.path(&Arg::Literal(f.to_string()), Read);
        }
    };
    for v in s.values(&["-d", "--data", "--data-binary", "--data-urlencode", "--json", "--url-query", "-H", "--header", "--variable"]) {
        if let Some((_, f)) = v.literal().and_then(|t| t.split_once('@')) {
            read(sink, f);
        }
    }
    for v in s.values(&["-F", "--form"]) {
        if let Some((_, f)) = v.literal().and_then(|t| t.split_once(['@', '<'])) {
            read(sink, f);
        }
    }
    for v in s.values(&["-b", "--cookie"]) {
        if let Some(f) = v.literal().filter(|t| !t.contains('=')) {
            read(sink, f);
        }
    }
    for v in s.values(&["-w", "--write-out"]) {
        let text = v.text();
        let mut rest = text;
        while let Some(at) = rest.find("%output{") {
            rest = &rest[at + "%output{".len()..];
            let f = rest.split('}').next().unwrap_or("").trim_start_matches(">>");
            if !f.is_empty() {
                sink.fill(&Arg::Literal(f.to_string()));
            }
        }
    }
}

/// `wget`: outputs, logs and input files its options name.
#[inline(never)]
pub(super) fn wget(s: &Split, sink: &mut Sink) {
    let mut named = false;
    for v in s.values(&["-O", "--output-document"]) {
        named = true;
        {
            sink.fill(&option_arg("--output-document", &v));
        }
    }
    for v in s.values(&["-o", "--output-file", "-a", "--append-output"]) {
        {
            sink.fill(&option_arg("--output-file", &v));
        }
    }
    for v in s.values(&["-i", "--input-file"]) {
        {
            sink.path(&option_arg("--input-file", &v), Read);
        }
    }
    // `-e CMD` and a config file are wgetrc commands, which may name
    // outputs (`output_document=`) and logs.
    if !s.values(&["-e", "--execute", "--config"]).is_empty() {
        sink.opaque("wget runs wgetrc commands (-e, --config) that may name the files it writes".into());
    }
    if !named && !s.has(&["--spider"]) {
        let prefix = s.values(&["-P", "--directory-prefix"]).first().map(|v| option_arg("--directory-prefix", &v));
        sink.unknown_names_in(prefix.as_ref(), &[Create, Write], "wget names the file after the URL");
    }
}

/// The file name a URL ends in, as `curl -O` names its output.
fn url_file_name(url: &str) -> Option<&str> {
    let path = url.split(['?', '#']).next()?;
    let after_host = path.split_once("://").map(|(_, r)| r).unwrap_or(path);
    let (_, p) = after_host.split_once('/')?;
    let name = p.rsplit('/').next()?;
    (!name.is_empty()).then_some(name)
}

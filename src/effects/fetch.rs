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
    for v in s.values(&["-T", "--upload-file", "-K", "--config"]) {
        {
            sink.path(&option_arg("--upload-file", &v), Read);
        }
    }
    for v in s.values(&["-d", "--data", "--data-binary", "--data-urlencode", "-F", "--form"]) {
        if let Some(p) = v.literal().and_then(|t| t.split_once('@')).map(|(_, f)| f.split(';').next().unwrap_or("")) {
            if !p.is_empty() {
                sink.path(&Arg::Literal(p.to_string()), Read);
            }
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

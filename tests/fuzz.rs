//! A mutation fuzzer for the SSE splitter, the frame decoders, the push receiver's body decoder
//! and the recording reader that runs on the stable toolchain (cargo-fuzz needs nightly): it
//! damages the golden captures of tests/golden and the demo's recording (assets/demo.ndjson) with
//! a seeded PRNG, feeds them in random chunks, and checks invariants. `cargo test` runs a short
//! burst; the README's "Reliability" section has the long run.
//!
//! FUZZ_INPUTS (default 2000, a few seconds in a debug build) inputs, FUZZ_SEED (default 0xA2A) seeds the PRNG. A failure prints
//! the seed and input number, so `FUZZ_SEED=<seed> FUZZ_INPUTS=<n+1>` reproduces it.

use std::path::Path;

use a2a_watch::a2a::sse::{DEFAULT_FRAME_LIMIT, Frame, frames};
use a2a_watch::a2a::wire::{jsonrpc, rest};
use a2a_watch::a2a::{AgentCard, Error, ListTasksResponse, StreamResponse, Task};
use a2a_watch::push;
use a2a_watch::record::{LINE_LIMIT, Reader};
use bytes::Bytes;
use futures::StreamExt;

const DEFAULT_INPUTS: u64 = 2000;
const DEFAULT_SEED: u64 = 0xA2A;

/// splitmix64: small, fast, and good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

struct Corpus {
    streams: Vec<Vec<u8>>,
    bodies: Vec<Vec<u8>>,
    /// Recordings (`--record`), for the reader `replay` uses.
    recordings: Vec<Vec<u8>>,
}

fn load_corpus() -> Corpus {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut corpus = Corpus {
        streams: Vec::new(),
        bodies: Vec::new(),
        recordings: vec![
            std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo.ndjson"))
                .expect("assets/demo.ndjson"),
        ],
    };
    let mut sets: Vec<_> = std::fs::read_dir(&root).expect("tests/golden").flatten().collect();
    sets.sort_by_key(|e| e.path());
    for set in sets.iter().filter(|e| e.path().is_dir()) {
        let mut files: Vec<_> = std::fs::read_dir(set.path()).expect("a golden set").flatten().collect();
        files.sort_by_key(|e| e.path());
        for file in files {
            let path = file.path();
            let bytes = std::fs::read(&path).expect("a golden file");
            match path.extension().and_then(|e| e.to_str()) {
                Some("sse") => corpus.streams.push(bytes),
                Some("json") => corpus.bodies.push(bytes),
                _ => {}
            }
        }
    }
    assert!(
        corpus.streams.len() > 10 && corpus.bodies.len() > 10,
        "golden captures missing"
    );
    corpus
}

/// Pieces that SSE and JSON parsers treat specially.
const TOKENS: &[&[u8]] = &[
    b"data:",
    b"data: ",
    b"data",
    b"event: error\n",
    b"event:",
    b": ping\r\n",
    b":\n",
    b"id: 7\n",
    b"id\n",
    b"retry: 10\n",
    b"retry: x\n",
    b"\r\n",
    b"\r",
    b"\n",
    b"\n\n",
    b"\r\r",
    b"\xEF\xBB\xBF",
    b"\xFF",
    b"\xC3",
    b"\xE2\x80",
    b"\xF0\x9F\x98",
    b"\xF0\x9F\x98\x80",
    b"\xE2\x80\xAE",
    b"\x1b]52;c;aGk=\x07",
    b"\x00",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b"\\u0000",
    b"\\ud800",
    b":",
    b",",
    b"null",
    b"true",
    b"1e999",
    b"-0",
    b"18446744073709551616",
    b"\"kind\":\"task\"",
    b"\"error\":{\"code\":-32001,\"message\":\"x\"}",
    b"{\"error\"",
    b"\"state\":\"TASK_STATE_INPUT_REQUIRED\"",
    b"\"state\":\"input-required\"",
    b"\"timestamp\":\"2026-13-45T99:99:99Z\"",
    b"\"timestamp\":1e308",
    b"\"parts\":[{\"kind\":\"file\"}]",
    b"\"text\":",
];

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, corpus: &Corpus) {
    for _ in 0..1 + rng.below(6) {
        let len = input.len();
        let at = rng.below(len + 1);
        match rng.below(14) {
            0 if len > 0 => input[at.min(len - 1)] ^= 1 << rng.below(8),
            1 => input.insert(at, rng.next() as u8),
            2 if len > 0 => {
                let end = (at + rng.below(64)).min(len);
                input.drain(at..end);
            }
            3 => input.truncate(at),
            4 => {
                let token = rng.pick(TOKENS);
                input.splice(at..at, token.iter().copied());
            }
            5 => {
                // Splice part of another capture in.
                let other = if rng.chance(2) {
                    rng.pick(&corpus.streams)
                } else {
                    rng.pick(&corpus.bodies)
                };
                let from = rng.below(other.len() + 1);
                let to = (from + rng.below(512)).min(other.len());
                input.splice(at..at, other[from..to].iter().copied());
            }
            6 if len > 0 => {
                // Duplicate a run, sometimes many times.
                let end = (at + 1 + rng.below(128)).min(len);
                let run = input[at.min(len - 1)..end].to_vec();
                let most = if rng.chance(100) { 2000 } else { 3 };
                for _ in 0..1 + rng.below(most) {
                    input.splice(at..at, run.iter().copied());
                }
            }
            7 => {
                // A long line, around the frame limit of some runs; now and then one over the
                // default limit.
                let n = if rng.chance(256) {
                    DEFAULT_FRAME_LIMIT + rng.below(1024)
                } else {
                    1 << (4 + rng.below(13))
                };
                let fill = if rng.chance(2) { b'x' } else { b'[' };
                input.splice(at..at, std::iter::repeat_n(fill, n));
            }
            8 => *input = relined(input, rng),
            9 => *input = input.iter().flat_map(|&b| despaced(b, rng)).collect(),
            10 => {
                // Deep nesting inside a value.
                let depth = 1 + rng.below(300);
                let open = if rng.chance(2) { b'[' } else { b'{' };
                input.splice(at..at, std::iter::repeat_n(open, depth));
            }
            11 => {
                // Swap two runs of the same length (fields out of place).
                if len > 8 {
                    let n = 1 + rng.below(len / 4);
                    let a = rng.below(len - n);
                    let b = rng.below(len - n);
                    let (first, second) = (a.min(b), a.max(b));
                    if first + n <= second {
                        let (left, right) = input.split_at_mut(second);
                        left[first..first + n].swap_with_slice(&mut right[..n]);
                    }
                }
            }
            12 => {
                input.splice(0..0, b"\xEF\xBB\xBF".iter().copied());
            }
            _ => {
                // Replace one byte by one that matters to JSON or SSE.
                if len > 0 {
                    input[at.min(len - 1)] = *rng.pick(b"\n\r:{}[]\",\\ 0e-");
                }
            }
        }
    }
}

/// Rewrites the line ends: all LF, all CRLF, all CR, or a random mix.
fn relined(input: &[u8], rng: &mut Rng) -> Vec<u8> {
    let style = rng.below(4);
    let mut out = Vec::with_capacity(input.len() + input.len() / 8);
    let mut i = 0;
    while i < input.len() {
        let end = match input[i] {
            b'\r' if input.get(i + 1) == Some(&b'\n') => 2,
            b'\r' | b'\n' => 1,
            _ => 0,
        };
        if end == 0 {
            out.push(input[i]);
            i += 1;
            continue;
        }
        i += end;
        let pick = if style == 3 { rng.below(3) } else { style };
        out.extend_from_slice([&b"\n"[..], b"\r\n", b"\r"][pick]);
    }
    out
}

/// `data: x` becomes `data:x` now and then (both are valid SSE).
fn despaced(b: u8, rng: &mut Rng) -> Option<u8> {
    (b != b' ' || !rng.chance(3)).then_some(b)
}

/// Cuts `input` into chunks at random points (inside UTF-8 sequences and CRLF pairs too).
fn chunked(input: &[u8], rng: &mut Rng) -> Vec<Bytes> {
    let mut chunks = Vec::new();
    let mut rest = input;
    // Byte-sized reads of a long input cost time and find nothing that short inputs do not.
    let sizes: &[usize] = if input.len() > 1 << 16 {
        &[64, 4096, 1 << 16]
    } else {
        &[1, 2, 3, 7, 64, 4096]
    };
    let max = *rng.pick(sizes);
    while !rest.is_empty() {
        let n = 1 + rng.below(max.min(rest.len()));
        chunks.push(Bytes::copy_from_slice(&rest[..n]));
        rest = &rest[n..];
    }
    chunks
}

type Parsed = Vec<Result<Frame, String>>;

fn parse(chunks: Vec<Bytes>, limit: usize) -> Parsed {
    let source = futures::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>));
    futures::executor::block_on(frames(source, limit).map(|r| r.map_err(|e| e.to_string())).collect())
}

fn check_frames(parsed: &Parsed, limit: usize) -> Result<(), String> {
    if let Some(pos) = parsed.iter().position(Result::is_err)
        && pos + 1 != parsed.len()
    {
        return Err(format!("an item after the error at {pos}"));
    }
    for frame in parsed.iter().flatten() {
        if frame.data.len() > limit || frame.event.len() > limit {
            return Err(format!(
                "a frame over the limit of {limit}: data {} bytes",
                frame.data.len()
            ));
        }
        if frame.data.contains('\r') || frame.event.contains(['\r', '\n']) {
            return Err(format!("a line end inside a field: {frame:?}"));
        }
    }
    Ok(())
}

/// Where the chunks fall must not change what comes out, failures included.
fn check_chunking(whole: &Parsed, split: &Parsed) -> Result<(), String> {
    if whole != split {
        return Err(format!("chunking changed the frames: {whole:?} vs {split:?}"));
    }
    Ok(())
}

/// The lenient decoders accept what they can. What they accept, written out as our own JSON
/// (`get --json`), reads back; after that one normalisation (an unsupported part is written as
/// what it most resembles) writing and reading again changes nothing.
fn check_decoded(decoded: Result<StreamResponse, Error>) -> Result<(), String> {
    match decoded {
        Err(e) => {
            let _ = e.to_string();
            Ok(())
        }
        Ok(StreamResponse::Task(task)) => round_trip(&task),
        Ok(_) => Ok(()),
    }
}

fn round_trip(task: &Task) -> Result<(), String> {
    let rewrite = |t: &Task| -> Result<Task, String> {
        let json = serde_json::to_string(t).map_err(|e| format!("a decoded task does not serialize: {e}"))?;
        serde_json::from_str(&json).map_err(|e| format!("{json} does not decode again: {e}"))
    };
    let once = rewrite(task)?;
    let twice = rewrite(&once)?;
    if once != twice {
        return Err(format!("rewriting changed the task again: {once:?} became {twice:?}"));
    }
    Ok(())
}

fn decode_body(body: &[u8]) -> Result<(), String> {
    let frame = Frame {
        event: "message".into(),
        data: String::from_utf8_lossy(body).into_owned(),
    };
    check_decoded(jsonrpc::decode_frame(&frame))?;
    check_decoded(rest::decode_frame(&frame))?;
    if let Ok(task) = jsonrpc::decode::<Task>("fuzz", body) {
        round_trip(&task)?;
    }
    for status in [200, 404, 500] {
        if let Ok(task) = rest::decode::<Task>("fuzz", status, body) {
            round_trip(&task)?;
        }
        if let Err(e) = rest::decode::<ListTasksResponse>("fuzz", status, body) {
            let _ = e.to_string();
        }
    }
    // The push receiver's decoder: a body it takes names its task (it is looked up by that).
    if let Some(delivery) = push::read_delivery(body) {
        if delivery.named_task().is_none() {
            return Err("the push receiver took a delivery that names no task".into());
        }
        check_decoded(Ok(delivery))?;
    }
    if let Ok(card) = serde_json::from_slice::<AgentCard>(body) {
        let _ = card.interfaces();
        let _ = card.requirements();
    }
    Ok(())
}

/// What the recording reader made of an input: the header's agents, each event's arrival, the
/// error (line, what) that ended it, and whether the last line was cut.
#[derive(Debug, PartialEq)]
struct ReadBack {
    agents: usize,
    arrivals: Vec<u64>,
    error: Option<(usize, String)>,
    cut_short: bool,
}

fn read_back(input: &[u8], capacity: usize, limit: usize) -> Result<ReadBack, String> {
    let (header, mut reader) = match Reader::new(std::io::BufReader::with_capacity(capacity, input), limit) {
        Ok(read) => read,
        Err(error) => {
            return Ok(ReadBack {
                agents: 0,
                arrivals: Vec::new(),
                error: Some(error),
                cut_short: false,
            });
        }
    };
    let mut back = ReadBack {
        agents: header.agents.len(),
        arrivals: Vec::new(),
        error: None,
        cut_short: false,
    };
    for entry in &mut reader {
        match entry {
            Ok(entry) => back.arrivals.push(entry.ms),
            Err(error) => {
                back.error = Some(error);
                break;
            }
        }
    }
    if back.error.is_some() && reader.next().is_some() {
        return Err("the reader went on after an error".into());
    }
    back.cut_short = reader.cut_short;
    Ok(back)
}

/// The recording reader (`replay`): the size of the reads changes nothing, errors and a cut last
/// line included; arrival times never go back; an error names a line of the input, and a line
/// over the limit is one.
fn read_recording(input: &[u8], rng: &mut Rng) -> Result<(), String> {
    let limit = if rng.chance(2) {
        LINE_LIMIT
    } else {
        16 + rng.below(4096)
    };
    let whole = read_back(input, input.len().max(1), limit)?;
    let split = read_back(input, *rng.pick(&[1, 2, 3, 7, 64, 4096]), limit)?;
    if whole != split {
        return Err(format!(
            "the size of the reads changed the recording: {whole:?} vs {split:?}"
        ));
    }
    if !whole.arrivals.is_sorted() {
        return Err(format!("arrival times went back: {:?}", whole.arrivals));
    }
    let lines = input.split(|b| *b == b'\n').count();
    if let Some((line, _)) = &whole.error
        && !(1..=lines).contains(line)
    {
        return Err(format!("an error on line {line} of {lines}"));
    }
    let longest = input.split(|b| *b == b'\n').map(<[u8]>::len).max().unwrap_or(0);
    if longest > limit && whole.error.is_none() {
        return Err(format!("a line of {longest} bytes passed the limit of {limit}"));
    }
    Ok(())
}

fn one_input(rng: &mut Rng, corpus: &Corpus) -> Result<(), String> {
    if rng.chance(4) {
        let mut recording = rng.pick(&corpus.recordings).clone();
        mutate(rng, &mut recording, corpus);
        return read_recording(&recording, rng);
    }
    if rng.chance(3) {
        let mut body = rng.pick(&corpus.bodies).clone();
        mutate(rng, &mut body, corpus);
        return decode_body(&body);
    }
    let mut stream = rng.pick(&corpus.streams).clone();
    mutate(rng, &mut stream, corpus);
    let limit = if rng.chance(2) {
        DEFAULT_FRAME_LIMIT
    } else {
        16 + rng.below(4096)
    };
    let whole = parse(vec![Bytes::from(stream.clone())], limit);
    let split = parse(chunked(&stream, rng), limit);
    check_frames(&whole, limit)?;
    check_frames(&split, limit)?;
    check_chunking(&whole, &split)?;
    if std::str::from_utf8(&stream).is_err() && !split.iter().any(Result::is_err) {
        return Err("a stream that is not UTF-8 ended without an error".into());
    }
    for frame in split.iter().flatten() {
        check_decoded(jsonrpc::decode_frame(frame))?;
        check_decoded(rest::decode_frame(frame))?;
    }
    Ok(())
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => {
            let v = v.trim();
            let parsed = match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => v.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
        }
        Err(_) => default,
    }
}

fn main() {
    let inputs = env_number("FUZZ_INPUTS", DEFAULT_INPUTS);
    let seed = env_number("FUZZ_SEED", DEFAULT_SEED);
    let corpus = load_corpus();
    let started = std::time::Instant::now();
    let mut rng = Rng(seed);
    for n in 0..inputs {
        // Each input gets its own PRNG state, so one input can be replayed alone.
        let mut input_rng = Rng(rng.next());
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| one_input(&mut input_rng, &corpus)));
        let failure = match outcome {
            Ok(Ok(())) => continue,
            Ok(Err(broken)) => broken,
            Err(_) => "panicked (message above)".to_string(),
        };
        eprintln!("fuzz: input {n} with FUZZ_SEED={seed:#x}: {failure}");
        std::process::exit(1);
    }
    println!(
        "fuzz: {inputs} inputs, FUZZ_SEED={seed:#x}, no panic, invariants held ({:.1?})",
        started.elapsed()
    );
}

//! Benchmarks of the command area, each beside a baseline measured in the
//! same run. `parse_from_text`'s goal (issue 32: at most 3× a bare split)
//! is judged after criterion's runs on five rounds that time both in
//! turn: the median round, every round printed. Results and ratios:
//! `docs/benchmarks.md`.
//!
//! Run with `cargo bench -p botlane --bench commands`.

#![allow(missing_docs, clippy::unwrap_used)]

// `WEBSOCKET` is not used here: the command area's rows name no WebSocket crate.
#[allow(dead_code)]
#[path = "support/bench_table.rs"]
mod bench_table;

use std::hint::black_box;
use std::time::{Duration, Instant};

use botlane::{
    canonical_menu_json, compute_menu_hash, decode_command_data, encode_command_data,
    format_invocation_text, CommandArgValue, CommandArgs, CommandData, CommandDeclaration,
    CommandLookup, CommandOption, CommandOptionType, CommandRegistry, TextParseResult,
    MAX_COMMANDS_PAYLOAD, MAX_COMMANDS_PER_BOT,
};
use criterion::{criterion_group, criterion_main, Criterion};
use sha2::{Digest, Sha256};

fn roll() -> CommandDeclaration {
    CommandDeclaration::new("roll", "Roll some dice")
        .option(
            CommandOption::new("count", "How many dice", CommandOptionType::Integer).required(true),
        )
        .option(
            CommandOption::new("sides", "Sides per die", CommandOptionType::Integer)
                .choices(["4", "6", "8", "12", "20"]),
        )
        .option(CommandOption::new(
            "label",
            "What the roll is for",
            CommandOptionType::String,
        ))
}

fn registry() -> CommandRegistry {
    let mut registry = CommandRegistry::new();
    registry
        .register(roll(), |_ctx| async { Ok::<(), std::io::Error>(()) })
        .unwrap();
    for name in ["ping", "help", "poll", "remind", "weather"] {
        registry
            .register(
                CommandDeclaration::new(name, "Another command"),
                |_ctx| async { Ok::<(), std::io::Error>(()) },
            )
            .unwrap();
    }
    registry
}

fn roll_args() -> CommandArgs {
    CommandArgs::from([
        ("count".to_owned(), CommandArgValue::Integer(2)),
        ("sides".to_owned(), CommandArgValue::Integer(6)),
        ("label".to_owned(), CommandArgValue::from("fire damage")),
    ])
}

/// 50 commands whose canonical JSON is just under the payload cap.
fn full_menu() -> Vec<CommandDeclaration> {
    let mut decls = Vec::new();
    for i in 0..MAX_COMMANDS_PER_BOT {
        let mut decl = CommandDeclaration::new(
            format!("command-{i:02}"),
            format!("Command number {i} of the full-size benchmark menu"),
        );
        for j in 0..3 {
            decl = decl.option(
                CommandOption::new(
                    format!("opt{j}"),
                    "An option with a moderate description",
                    CommandOptionType::String,
                )
                .required(j == 0)
                .choices(["alpha", "beta", "gamma"]),
            );
        }
        decls.push(decl);
    }
    let len = canonical_menu_json(&decls).len();
    assert!(
        len <= MAX_COMMANDS_PAYLOAD && len > MAX_COMMANDS_PAYLOAD * 9 / 10,
        "menu is {len} bytes"
    );
    decls
}

/// What `parse_from_text` returns for `/roll 2 6 fire damage` (the name and
/// the `CommandArgs` map, whose allocations the API's types fix), built from
/// tokens already split: the result without the grammar.
fn args_from_tokens(tokens: &[&str]) -> (String, CommandArgs) {
    let mut args = CommandArgs::new();
    args.insert(
        "count".to_owned(),
        CommandArgValue::Integer(tokens[1].parse().unwrap()),
    );
    args.insert(
        "sides".to_owned(),
        CommandArgValue::Integer(tokens[2].parse().unwrap()),
    );
    args.insert(
        "label".to_owned(),
        CommandArgValue::String(tokens[3..].join(" ")),
    );
    (tokens[0].to_owned(), args)
}

fn bench_text(c: &mut Criterion) {
    let registry = registry();
    let line = "/roll 2 6 fire damage";
    let tokens = ["roll", "2", "6", "fire", "damage"];
    let TextParseResult::Ok(parsed) = registry.parse_from_text(line, None) else {
        panic!("the bench line invokes /roll");
    };
    assert_eq!(
        args_from_tokens(&tokens),
        (parsed.name, parsed.args),
        "the baseline builds the parser's result"
    );
    let mut group = c.benchmark_group("text");
    group.bench_function("parse_from_text", |b| {
        b.iter(|| registry.parse_from_text(black_box(line), None))
    });
    group.bench_function("baseline_split_whitespace", |b| {
        b.iter(|| black_box(line).split_whitespace().collect::<Vec<&str>>())
    });
    group.bench_function("baseline_args_from_tokens", |b| {
        b.iter(|| args_from_tokens(black_box(&tokens)))
    });
    let decl = roll();
    let args = roll_args();
    group.bench_function("format_invocation_text", |b| {
        b.iter(|| format_invocation_text(black_box(&decl), black_box(&args), None).unwrap())
    });
    group.finish();
    // Each result goes through `black_box`, as criterion's do: a result
    // dropped unseen lets the compiler leave its allocation out.
    parse_rounds(
        || drop(black_box(registry.parse_from_text(black_box(line), None))),
        || {
            drop(black_box(
                black_box(line).split_whitespace().collect::<Vec<&str>>(),
            ))
        },
    );
}

/// `parse` against `split` in five rounds, each of samples timing 1,000
/// calls of one then of the other: per round, the ratio of their median
/// samples. In turn rather than one after the other (as criterion
/// measures), so that a load that drifts during the run weighs on both.
fn parse_rounds(parse: impl Fn(), split: impl Fn()) {
    let measuring = bench_table::measuring();
    let (rounds, samples) = if measuring { (5, 200) } else { (1, 2) };
    let time = |f: &dyn Fn()| {
        let start = Instant::now();
        for _ in 0..1_000 {
            f();
        }
        start.elapsed()
    };
    let median = |mut t: Vec<Duration>| {
        t.sort();
        t[t.len() / 2]
    };
    let mut ratios = Vec::with_capacity(rounds);
    for round in 1..=rounds {
        let (mut parsed, mut split_up) = (Vec::new(), Vec::new());
        for _ in 0..samples {
            parsed.push(time(&parse));
            split_up.push(time(&split));
        }
        let (parse_time, split_time) = (median(parsed), median(split_up));
        let ratio = parse_time.as_secs_f64() / split_time.as_secs_f64();
        eprintln!(
            "text: round {round} of {samples} samples of 1,000 calls, load {}: parse_from_text \
             {:?}, split {:?} per call, {ratio:.2}×",
            bench_table::load(),
            parse_time / 1_000,
            split_time / 1_000,
        );
        ratios.push(ratio);
    }
    if !measuring {
        return;
    }
    bench_table::Table::new("cargo bench -p botlane --bench commands", "—").rounds_row(
        "parse_from_text, /roll 2 6 fire damage, interleaved",
        &format!("{rounds} rounds of {samples} samples each"),
        &ratios,
        "split_whitespace().collect(), same rounds",
        "×",
        "≤ 3×",
    );
}

fn bench_sidecar(c: &mut Criterion) {
    let data = CommandData {
        bot_id: "3f2504e0-4f89-11d3-9a0c-0305e82c3301".to_owned(),
        name: "roll".to_owned(),
        args: roll_args(),
    };
    let json = encode_command_data(&data);
    let registry = registry();
    let mut group = c.benchmark_group("sidecar");
    group.bench_function("encode_command_data", |b| {
        b.iter(|| encode_command_data(black_box(&data)))
    });
    group.bench_function("decode_command_data", |b| {
        b.iter(|| decode_command_data(black_box(&json), None))
    });
    group.bench_function("decode_command_data_with_registry", |b| {
        b.iter(|| decode_command_data(black_box(&json), Some(&registry)))
    });
    group.bench_function("baseline_serde_json_value", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&json)).unwrap())
    });
    group.bench_function("accepts", |b| {
        b.iter(|| registry.accepts(black_box("roll"), black_box(&data.args)))
    });
    group.finish();
}

fn bench_menu(c: &mut Criterion) {
    let decls = full_menu();
    let bytes = canonical_menu_json(&decls).into_bytes();
    let mut group = c.benchmark_group("menu");
    group.bench_function("compute_menu_hash", |b| {
        b.iter(|| compute_menu_hash(black_box(&decls)))
    });
    group.bench_function("baseline_raw_sha256", |b| {
        b.iter(|| Sha256::digest(black_box(&bytes)))
    });
    group.finish();
}

criterion_group!(benches, bench_text, bench_sidecar, bench_menu);
criterion_main!(benches);

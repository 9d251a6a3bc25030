//! `plumb changes`: the changes `plumb check` kept in the store, and their triage, from
//! the terminal (the same states `plumb serve`'s Changes page sets).

use super::StoreArg;
use anyhow::bail;
use plumb_store::{ChangeFilter, TriageState};
use std::process::ExitCode;

/// `plumb changes [list|set]`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "States: untriaged, investigating (the gate keeps failing on it), expected \
(the new level becomes the plan's base), fixed (later runs are judged against the level \
before it), not-a-change (noise: the gate no longer fails on it).\n\
Examples:\n  plumb changes                       every untriaged change\n  \
plumb changes list --state expected --json\n  \
plumb changes set 4 expected --note \"block cache 8 GB -> 4 GB, deliberate\" --by ana"
)]
pub struct ChangesArgs {
    #[command(subcommand)]
    action: Option<Action>,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// List kept changes, newest first [default: the untriaged ones].
    List(ListArgs),
    /// Set the triage state of one or more changes.
    Set(SetArgs),
}

#[derive(Debug, Default, clap::Args)]
struct ListArgs {
    /// Only this state (untriaged, investigating, expected, fixed, not-a-change, or all).
    #[arg(long, default_value = "untriaged", value_name = "STATE")]
    state: String,
    /// Only this step.
    #[arg(long, value_name = "NAME")]
    step: Option<String>,
    /// Only this host.
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    /// At most this many.
    #[arg(long, default_value_t = 50, value_name = "N")]
    limit: usize,
    /// Print JSON (one array of changes).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Debug, clap::Args)]
struct SetArgs {
    /// The changes (ids from `plumb changes`), comma-separated.
    #[arg(value_name = "ID[,ID…]", value_delimiter = ',', required = true)]
    ids: Vec<i64>,
    /// The new state.
    #[arg(value_name = "STATE")]
    state: String,
    /// Why (kept with the state, shown on the Changes page).
    #[arg(long, value_name = "TEXT")]
    note: Option<String>,
    /// Who says so [default: $USER].
    #[arg(long, value_name = "NAME")]
    by: Option<String>,
    #[command(flatten)]
    store: StoreArg,
}

fn state_of(s: &str, flag: &str) -> anyhow::Result<TriageState> {
    s.parse::<TriageState>()
        .map_err(|e| anyhow::anyhow!("{flag}: {e}"))
}

pub fn changes_cmd(a: ChangesArgs) -> anyhow::Result<ExitCode> {
    match a.action {
        None => list(ListArgs {
            state: "untriaged".into(),
            limit: 50,
            store: a.store,
            ..Default::default()
        }),
        Some(Action::List(l)) => list(ListArgs {
            store: if l.store.store.is_some() {
                l.store
            } else {
                a.store
            },
            ..l
        }),
        Some(Action::Set(s)) => set(SetArgs {
            store: if s.store.store.is_some() {
                s.store
            } else {
                a.store
            },
            ..s
        }),
    }
}

fn list(a: ListArgs) -> anyhow::Result<ExitCode> {
    let state = match a.state.as_str() {
        "all" => None,
        s => Some(state_of(s, "--state")?),
    };
    let store = a.store.open_existing()?;
    let filter = ChangeFilter {
        state,
        step: a.step,
        host: a.host,
        limit: a.limit,
        ..Default::default()
    };
    let changes = store.changes(&filter)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&changes)?);
        return Ok(ExitCode::SUCCESS);
    }
    if changes.is_empty() {
        println!(
            "no {}change in {}",
            state.map(|s| format!("{s} ")).unwrap_or_default(),
            store.shown()
        );
    }
    for c in &changes {
        println!("{}", plumb_report::triage::line(c));
    }
    let total = store.count_changes(&filter)?;
    if total as usize > changes.len() {
        println!("… {} more (--limit)", total as usize - changes.len());
    }
    Ok(ExitCode::SUCCESS)
}

fn set(a: SetArgs) -> anyhow::Result<ExitCode> {
    let state = state_of(&a.state, "STATE")?;
    let by =
        a.by.or_else(|| std::env::var("USER").ok())
            .unwrap_or_else(|| "unknown".into());
    if by.trim().is_empty() {
        bail!("--by: give a name (who says so)");
    }
    let store = a.store.open_existing()?;
    // Every id is checked before any is set: all or none.
    for id in &a.ids {
        store.change(*id)?;
    }
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    for id in &a.ids {
        let c = store.set_triage(*id, state, a.note.as_deref(), &by, &now)?;
        println!("{}", plumb_report::triage::line(&c));
    }
    Ok(ExitCode::SUCCESS)
}

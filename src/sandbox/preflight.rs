//! The start-up preflight: can this kernel confine a worker at all?
//!
//! Before the server serves (and before `duckgate query` runs its one query), it starts our
//! own binary as `duckgate __worker --confine-only …`, with the command line, environment and
//! resource limits of every worker ([`super::pool::confinement_preflight`]). That process runs
//! the workers' own [`confine`] and reports the [`Posture`] it got, then exits: it never creates
//! DuckDB and never opens the database. So the answer comes from the same code on the same
//! kernel, not from a separate feature test that could disagree with it.
//!
//! Like every worker, it grants the database file only if it exists
//! ([`WorkerArgs::confine_plan`]): the server must start when the file is missing (calls then
//! answer `database_not_found` with the operator's hint). One difference from a worker, so that
//! the preflight reports instead of stopping:
//! - it always confines with `allow_unconfined` on, so a kernel without landlock still gets its
//!   seccomp checked, and [`Posture::unenforced`] lists every gap at once. The decision is the
//!   parent's ([`check`]): with a gap and without `--allow-unconfined` the server refuses to
//!   start. Workers themselves keep failing closed on their own, whatever the preflight said.
//!
//! Any other confinement failure (no_new_privs, rlimits, a landlock or seccomp error that is not
//! the kernel lacking the feature) also stops the start-up: every worker would fail the same way.

use std::fmt;
use std::io::{self, Write};

use crate::protocol::worker_args::WorkerArgs;
use crate::protocol::{Failure, LandlockAbsence, Posture, Response, UnenforcedLayer};
use crate::sandbox::bypass::Bypass;
use crate::sandbox::confine::confine;
use crate::sandbox::frame;
use crate::sandbox::pool::{self, WorkerSpec};
use duckgate_validate::error::ErrorKind;

/// The child side: confine like a worker, write one `Response::Posture` (or `Response::Error`)
/// frame, and return the exit code. Nothing else: no DuckDB, no request.
pub fn confine_only(args: &WorkerArgs) -> i32 {
    // An unreadable bypass confines without its ABI cap; the workers themselves refuse it.
    let bypass = Bypass::from_env().unwrap_or_default();
    let mut plan = args.confine_plan(&bypass);
    // The two differences from a worker (see the module documentation): a missing database is
    // not granted (`confine_plan` grants only files that exist), and every gap is reported for
    // the parent to decide.
    plan.allow_unconfined = true;
    let (response, code) = match confine(&plan) {
        Ok(mut posture) => {
            posture.bypassed_layers = bypass.names();
            (Response::Posture(posture), 0)
        }
        Err(e) => (
            Response::Error(Failure::new(
                ErrorKind::InternalError,
                format!("sandbox setup failed: {e}"),
            )),
            3,
        ),
    };
    let mut out = io::stdout().lock();
    // Best effort: if the pipe is gone the parent has given up on us anyway.
    let _ = frame::write_frame(&mut out, &response);
    let _ = out.flush();
    code
}

/// The parent side: run the preflight with `spec` (the workers' own) and decide.
///
/// Returns the posture workers will have: with a gap (`unenforced` not empty, or a property not
/// enforced) only under `spec.worker.allow_unconfined`; otherwise the refusal.
pub async fn probe_and_decide(spec: &WorkerSpec) -> Result<Posture, StartRefusal> {
    let posture = posture(spec).await.map_err(StartRefusal::SetupFailed)?;
    decide(posture, spec.worker.allow_unconfined)
}

/// The posture the preflight reports, whatever it is (`duckgate check-sandbox`).
pub async fn posture(spec: &WorkerSpec) -> Result<Posture, SetupFailure> {
    pool::confinement_preflight(spec)
        .await
        .map_err(SetupFailure)
}

/// Whether every property holds and nothing is listed as unenforced.
pub fn fully_confined(posture: &Posture) -> bool {
    posture.unenforced.is_empty()
        && !posture.properties.is_empty()
        && posture.properties.iter().all(|p| p.enforced)
}

/// The decision on a preflight's posture.
fn decide(posture: Posture, allow_unconfined: bool) -> Result<Posture, StartRefusal> {
    if fully_confined(&posture) || allow_unconfined {
        Ok(posture)
    } else {
        Err(StartRefusal::Unconfinable(gaps(&posture)))
    }
}

/// Why the server does not start: the preflight's verdict, one paragraph for stderr
/// ([`fmt::Display`]), which is also the message every MCP call is answered with.
#[derive(Debug, Clone, PartialEq)]
pub enum StartRefusal {
    /// The kernel cannot confine workers (each gap once) and `--allow-unconfined` is off.
    Unconfinable(Vec<Gap>),
    /// Confinement fails for a reason other than a missing feature: every worker would fail
    /// the same way, whatever the operator allows.
    SetupFailed(SetupFailure),
}

impl fmt::Display for StartRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartRefusal::Unconfinable(gaps) => f.write_str(&refusal(gaps)),
            StartRefusal::SetupFailed(failure) => failure.fmt(f),
        }
    }
}

impl std::error::Error for StartRefusal {}

/// The preflight could not confine its process for a reason other than a missing kernel
/// feature (no_new_privs, rlimits, a landlock or seccomp error), or did not answer: the
/// preflight process's error.
#[derive(Debug, Clone, PartialEq)]
pub struct SetupFailure(pub Failure);

impl fmt::Display for SetupFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "duckgate refuses to start: the query workers' sandbox cannot be set up on this \
             machine ({}), so every call would fail. --allow-unconfined does not change this: it \
             only accepts a kernel without landlock or seccomp.",
            self.0.message
        )
    }
}

impl std::error::Error for SetupFailure {}

/// One reason workers are not fully confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gap {
    /// A layer the kernel lacks (the posture's `unenforced`).
    Layer(UnenforcedLayer),
    /// A promise of confinement that does not hold for another reason (a posture property
    /// that is not enforced).
    Property {
        /// The property's name, e.g. `file_reads`.
        property: String,
        /// Why it does not hold.
        mechanism: String,
    },
}

impl fmt::Display for Gap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Gap::Layer(layer) => layer.fmt(f),
            Gap::Property {
                property,
                mechanism,
            } => write!(f, "{property}: {mechanism}"),
        }
    }
}

/// Each gap once: the kernel features missing (`unenforced`), then any property that does not
/// hold for another reason.
pub fn gaps(posture: &Posture) -> Vec<Gap> {
    let mut gaps: Vec<Gap> = posture.unenforced.iter().cloned().map(Gap::Layer).collect();
    if gaps.is_empty() {
        gaps.extend(
            posture
                .properties
                .iter()
                .filter(|p| !p.enforced)
                .map(|p| Gap::Property {
                    property: p.property.clone(),
                    mechanism: p.mechanism.clone(),
                }),
        );
    }
    gaps
}

/// Why duckgate will not start on a kernel that lacks a confinement feature: one paragraph.
fn refusal(unenforced: &[Gap]) -> String {
    let cause = if under_inherited_filter(unenforced) {
        "the query workers cannot be confined in this process"
    } else {
        "this kernel cannot confine the query workers"
    };
    format!(
        "duckgate refuses to start: {cause}. {} Every query \
         runs in a single-use worker process that locks itself down with landlock (which files \
         it may read; no network) and a seccomp filter (no exec, sockets, ptrace or mounts) \
         before it opens the database, so that SQL which gets past the validator and DuckDB's \
         own hardening still cannot read other files, reach the network or run programs; \
         without that layer the database's reader would be guarded by SQL checks alone, so \
         duckgate does not serve. {}",
        sentences(unenforced),
        fix_for(unenforced),
    )
}

/// Whether a gap is landlock failing under a seccomp filter duckgate inherited (most likely a
/// container's profile refusing it), on a kernel new enough to have it.
fn under_inherited_filter(gaps: &[Gap]) -> bool {
    gaps.iter().any(|gap| {
        matches!(
            gap,
            Gap::Layer(UnenforcedLayer::Landlock(
                LandlockAbsence::FailsUnderInheritedFilter { .. }
            ))
        )
    })
}

/// What to do about these gaps: [`FIX`], after the way out of an inherited seccomp filter that
/// refuses landlock when one is in force (then a newer kernel would not help).
pub fn fix_for(gaps: &[Gap]) -> String {
    if under_inherited_filter(gaps) {
        format!("{FIX_INHERITED_FILTER} {FIX}")
    } else {
        FIX.to_owned()
    }
}

/// The way out when landlock is refused by a seccomp filter duckgate was started under.
pub const FIX_INHERITED_FILTER: &str = "Start duckgate without a seccomp filter that refuses \
    landlock: in a container, Docker's and Podman's default profiles allow \
    landlock_create_ruleset, landlock_add_rule and landlock_restrict_self, so drop the \
    --security-opt seccomp=… option or add those three calls to your profile; under a service \
    manager, allow them in its system-call filter.";

/// What to do about a kernel that cannot confine workers: the same words in the refusal, the
/// warning, the MCP tools' error and the README.
pub const FIX: &str = "Run it on Linux 5.13 or later with landlock enabled (landlock ABI 1 or \
    newer: `landlock` in the kernel's `lsm=` list) and seccomp filters; `duckgate check-sandbox` \
    shows what this kernel offers. Or add --allow-unconfined to duckgate's arguments to run \
    anyway with weaker isolation (announced on stderr at every start and reported by \
    server_info).";

/// The loud, multi-line warning printed at start-up under `--allow-unconfined` when something
/// is not enforced.
pub fn unconfined_warning(unenforced: &[Gap]) -> String {
    let rule = "#".repeat(78);
    let mut text = format!(
        "{rule}\n# WARNING: duckgate runs with --allow-unconfined and this kernel cannot enforce\n\
         # every sandbox layer of its query workers. NOT ENFORCED:\n"
    );
    for gap in unenforced {
        text.push_str(&format!("#   - {gap}\n"));
    }
    text.push_str(&format!(
        "# SQL that gets past the validator and DuckDB's hardening could then read other\n\
         # files, reach the network or run programs as this user. server_info reports this\n\
         # posture. Use Linux {} or later with landlock (ABI {} or newer) and seccomp\n\
         # instead; `duckgate check-sandbox` shows what this kernel offers.\n{rule}",
        super::confine::MINIMUM_LINUX,
        super::confine::MINIMUM_LANDLOCK_ABI,
    ));
    text
}

/// `a; b` → `A; b.` style: each gap as a sentence.
fn sentences(unenforced: &[Gap]) -> String {
    unenforced
        .iter()
        .map(|gap| {
            let mut sentence = gap.to_string();
            if !sentence.ends_with('.') {
                sentence.push('.');
            }
            let mut chars = sentence.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => sentence,
            }
        })
        .collect::<Vec<String>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SeccompAbsence;

    const NO_LANDLOCK: UnenforcedLayer = UnenforcedLayer::Landlock(LandlockAbsence::NotImplemented);
    const NO_SECCOMP: UnenforcedLayer = UnenforcedLayer::Seccomp(SeccompAbsence::NoSystemCall);

    fn posture(unenforced: &[UnenforcedLayer]) -> Posture {
        let abi = if unenforced.is_empty() { Some(1) } else { None };
        Posture {
            unenforced: unenforced.to_vec(),
            properties: crate::sandbox::confine::properties::assess(
                &crate::sandbox::confine::properties::Mechanisms {
                    landlock_abi: abi,
                    seccomp: true,
                    no_new_privs: true,
                },
            ),
            ..Posture::default()
        }
    }

    #[test]
    fn a_gap_refuses_without_the_flag_and_passes_with_it() {
        let gap = [NO_LANDLOCK];
        let refused = decide(posture(&gap), false).unwrap_err();
        assert_eq!(
            refused,
            StartRefusal::Unconfinable(vec![Gap::Layer(NO_LANDLOCK)])
        );
        let refused = refused.to_string();
        // The gap as a sentence: capitalised, ending with a period.
        assert!(
            refused.contains(
                "Landlock: the kernel does not implement landlock (landlock_create_ruleset"
            )
        );
        assert!(
            refused.contains("is not restricted. Every query"),
            "{refused}"
        );
        assert!(refused.contains("--allow-unconfined"), "{refused}");
        assert!(!refused.contains('\n'), "one paragraph: {refused}");
        assert_eq!(
            decide(posture(&gap), true).unwrap().unenforced,
            gap.to_vec()
        );
    }

    #[test]
    fn landlock_refused_by_an_inherited_filter_is_not_blamed_on_the_kernel() {
        let blocked = UnenforcedLayer::Landlock(LandlockAbsence::FailsUnderInheritedFilter {
            inherited_filters: 1,
        });
        let refused = decide(posture(std::slice::from_ref(&blocked)), false)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("cannot be confined in this process"),
            "{refused}"
        );
        assert!(!refused.contains("this kernel cannot"), "{refused}");
        assert!(
            refused.contains("most likely that filter (a container runtime's seccomp profile"),
            "{refused}"
        );
        assert!(refused.contains(FIX_INHERITED_FILTER), "{refused}");
        // A kernel without landlock gets the kernel's fix only.
        let kernel = fix_for(&[Gap::Layer(NO_LANDLOCK)]);
        assert_eq!(kernel, FIX);
        assert!(fix_for(&[Gap::Layer(blocked)]).starts_with(FIX_INHERITED_FILTER));
    }

    #[test]
    fn the_fix_names_the_floor_constants() {
        let floor = format!(
            "Linux {} or later with landlock enabled (landlock ABI {} or newer",
            crate::sandbox::confine::MINIMUM_LINUX,
            crate::sandbox::confine::MINIMUM_LANDLOCK_ABI
        );
        assert!(FIX.contains(&floor), "{FIX}");
    }

    #[test]
    fn no_gap_passes_with_or_without_the_flag() {
        assert!(decide(posture(&[]), false).unwrap().unenforced.is_empty());
        assert!(decide(posture(&[]), true).unwrap().unenforced.is_empty());
    }

    #[test]
    fn a_property_that_does_not_hold_refuses_even_without_a_named_gap() {
        let mut weak = posture(&[]);
        weak.properties[0].enforced = false;
        let refused = decide(weak, false).unwrap_err();
        assert!(
            matches!(&refused, StartRefusal::Unconfinable(gaps)
                if matches!(gaps[..], [Gap::Property { .. }])),
            "{refused:?}"
        );
        let refused = refused.to_string();
        assert!(refused.contains("File_reads:"), "{refused}");
        // A posture with no properties at all (an old worker binary) is not "fully confined".
        assert!(!fully_confined(&Posture::default()));
    }

    #[test]
    fn the_warning_lists_every_gap_on_its_own_line() {
        let warning = unconfined_warning(&[Gap::Layer(NO_LANDLOCK), Gap::Layer(NO_SECCOMP)]);
        assert!(warning.contains(&format!("\n#   - {NO_LANDLOCK}\n#   - {NO_SECCOMP}\n")));
        assert!(warning.contains("\n#   - landlock: the kernel does not implement landlock"));
        assert!(warning.contains("--allow-unconfined"));
        assert!(warning.lines().count() >= 6, "{warning}");
    }
}

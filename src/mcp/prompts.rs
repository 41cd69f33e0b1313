//! Starter prompts (`prompts/list`, `prompts/get`): the questions people with diabetes bring
//! first, written out so the agent reads the data the way a clinic does. Each prompt names the
//! tools it uses and the tables and views it expects, so an agent with a differently shaped
//! database still knows what to look for.

use rmcp::model::{GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::Value;

/// The 14-day review.
pub const GLUCOSE_REVIEW: &str = "glucose_review";
/// The night just past.
pub const LAST_NIGHT: &str = "last_night";

/// Longest prompt argument accepted, in bytes: a number of days or a date.
const MAX_ARGUMENT_BYTES: usize = 32;

/// The prompts, as `prompts/list` gives them.
pub fn list() -> Vec<Prompt> {
    vec![
        Prompt::new(
            GLUCOSE_REVIEW,
            Some(
                "Review the last 14 days of CGM glucose the way a diabetes clinic reads the \
                 consensus AGP report: time in ranges, mean, GMI, CV, the AGP, and what to ask \
                 the care team. Uses list_tables, describe_table, query and plot (kinds tir and \
                 agp) on the CGM readings table (e.g. cgm_readings) and views of daily or \
                 consensus metrics (e.g. daily_glucose).",
            ),
            Some(vec![
                PromptArgument::new("days")
                    .with_description(
                        "Days to review, ending today (default 14, the consensus period).",
                    )
                    .with_required(false),
            ]),
        )
        .with_title("14-day glucose review"),
        Prompt::new(
            LAST_NIGHT,
            Some(
                "What happened last night: lows, highs and fast changes between 22:00 and 07:00 \
                 local time, next to the boluses, carbs and basal changes before them. Uses \
                 list_tables, describe_table, query and plot (kind line) on the CGM readings and \
                 the pump's events and basal tables (e.g. cgm_readings, events, \
                 basal_deliveries).",
            ),
            Some(vec![
                PromptArgument::new("date")
                    .with_description(
                        "The morning the night ended, YYYY-MM-DD in local time (default today).",
                    )
                    .with_required(false),
            ]),
        )
        .with_title("What happened last night"),
    ]
}

/// Why a `prompts/get` cannot be answered, in words for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptError(
    /// The reason, in a sentence for the client.
    pub String,
);

/// The messages of prompt `name` with `arguments`; `time_zone` is the server's, which the
/// prompts name so "last night" means the user's night.
pub fn get(
    name: &str,
    arguments: Option<&JsonObject>,
    time_zone: &str,
) -> Result<GetPromptResult, PromptError> {
    let argument = |key: &str| -> Result<Option<String>, PromptError> {
        match arguments.and_then(|a| a.get(key)) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) if text.len() <= MAX_ARGUMENT_BYTES => {
                Ok(Some(text.trim().to_string()).filter(|t| !t.is_empty()))
            }
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(PromptError(format!(
                "the argument {key} must be text of at most {MAX_ARGUMENT_BYTES} bytes"
            ))),
        }
    };
    let known = [GLUCOSE_REVIEW, LAST_NIGHT];
    let allowed: &[&str] = match name {
        GLUCOSE_REVIEW => &["days"],
        LAST_NIGHT => &["date"],
        _ => &[],
    };
    if known.contains(&name)
        && let Some(extra) =
            arguments.and_then(|a| a.keys().find(|k| !allowed.contains(&k.as_str())))
    {
        return Err(PromptError(format!(
            "the prompt {name} takes no argument {:?}; it takes {}",
            truncated(extra),
            allowed.join(", ")
        )));
    }
    match name {
        GLUCOSE_REVIEW => {
            let days = match argument("days")? {
                None => 14,
                Some(text) => text
                    .parse::<u32>()
                    .ok()
                    .filter(|d| (1..=366).contains(d))
                    .ok_or_else(|| {
                        PromptError(format!(
                            "days must be a whole number from 1 to 366, not {:?}",
                            truncated(&text)
                        ))
                    })?,
            };
            Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                glucose_review(days, time_zone),
            )])
            .with_description(format!("{days}-day glucose review")))
        }
        LAST_NIGHT => {
            let date = match argument("date")? {
                None => "today".to_string(),
                Some(text) if is_date(&text) => text,
                Some(text) => {
                    return Err(PromptError(format!(
                        "date must be YYYY-MM-DD, not {:?}",
                        truncated(&text)
                    )));
                }
            };
            Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                last_night(&date, time_zone),
            )])
            .with_description("What happened last night"))
        }
        _ => Err(PromptError(format!(
            "no prompt {:?}; this server offers {}",
            truncated(name),
            known.join(", ")
        ))),
    }
}

/// A name as an error may quote it: at most 64 characters.
fn truncated(text: &str) -> String {
    text.chars().take(64).collect()
}

fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            _ => b.is_ascii_digit(),
        })
}

fn glucose_review(days: u32, time_zone: &str) -> String {
    use crate::clinical::{
        GMI_INTERCEPT, GMI_SLOPE, HIGH_ABOVE as HI, LOW_BELOW as LO, VERY_HIGH_ABOVE as HI2,
        VERY_LOW_BELOW as LO2, goals,
    };
    format!(
        "Review my CGM glucose for the last {days} days (local time, {time_zone}), the way a \
diabetes clinic reads the international consensus AGP report.

1. Call list_tables, then describe_table on the table of CGM readings (for example cgm_readings) \
to find its timestamp column and its glucose column in mg/dL. If list_tables shows views of \
daily or consensus CGM metrics (for example daily_glucose), read those first.
2. Call query for the consensus metrics over the last {days} local days: days with data, the \
share of time the CGM was active, mean glucose, GMI ({GMI_INTERCEPT} + {GMI_SLOPE} × mean mg/dL), \
CV (standard deviation / mean; stable at {cv}% or less), and the share of readings below {LO2}, \
{LO2}–{lo1}, {LO}–{HI}, {hi1}–{HI2} and above {HI2} mg/dL. Aggregate in SQL; do not fetch raw readings.
3. Call plot with kind tir on the glucose column over the same days, then plot with kind agp \
(x: the reading time, y: glucose).
4. Summarise in plain words: which consensus goals are met (time in range above {tir}%, below {LO} \
under {below}%, below {LO2} under {below2}%, above {HI} under {above}%, above {HI2} under {above2}%), \
the times of day when lows and highs cluster in the AGP, and the questions worth bringing to the \
care team.

Say how many days of data there were and how much of the time the CGM was active: the \
consensus asks for {report_days} days and {active}%. Do not suggest insulin doses or changes to \
therapy.",
        lo1 = LO - 1,
        hi1 = HI + 1,
        cv = goals::CV_AT_MOST,
        tir = goals::IN_RANGE_OVER,
        below = goals::BELOW_LOW_UNDER,
        below2 = goals::BELOW_VERY_LOW_UNDER,
        above = goals::ABOVE_HIGH_UNDER,
        above2 = goals::ABOVE_VERY_HIGH_UNDER,
        report_days = goals::REPORT_DAYS,
        active = goals::ACTIVE_AT_LEAST,
    )
}

fn last_night(date: &str, time_zone: &str) -> String {
    use crate::clinical::{HIGH_ABOVE, LOW_BELOW, VERY_LOW_BELOW};
    let morning = if date == "today" {
        "this morning".to_string()
    } else {
        format!("the morning of {date}")
    };
    format!(
        "Tell me what happened to my glucose last night: from 22:00 the evening before to 07:00 \
{morning}, local time ({time_zone}).

1. Call list_tables and describe_table to find the CGM readings (for example cgm_readings) and \
the pump's tables of events and basal insulin (for example events and basal_deliveries), with \
their time columns.
2. Call query for the night's readings: the lowest and highest with their times, the minutes \
below {LOW_BELOW} and below {VERY_LOW_BELOW} mg/dL and above {HIGH_ABOVE} mg/dL, and any fall or \
rise faster than 2 mg/dL per minute. Then query the events (boluses, carbs, notes) and the basal changes (temporary rates, \
suspensions) from 18:00 the evening before to the end of the night.
3. Call plot with kind line (x: the reading time, y: glucose, target_low {LOW_BELOW}, target_high \
{HIGH_ABOVE}) for the night.
4. Tell the story of the night in plain words, linking each low or high to what came before it. \
Times in the results carry their offset; say them in local time.

Do not suggest insulin doses or changes to therapy."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arguments(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    fn text(result: &GetPromptResult) -> String {
        serde_json::to_value(&result.messages[0].content).unwrap()["text"]
            .as_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn each_prompt_names_the_tools_it_uses() {
        for prompt in list() {
            let description = prompt.description.clone().unwrap();
            let body = text(&get(&prompt.name, None, "Europe/Berlin").unwrap());
            for tool in ["list_tables", "describe_table", "query", "plot"] {
                assert!(description.contains(tool), "{}: {tool}", prompt.name);
                assert!(body.contains(tool), "{}: {tool}", prompt.name);
            }
            assert!(body.contains("cgm_readings"), "{}", prompt.name);
            assert!(body.contains("Europe/Berlin"), "{}", prompt.name);
        }
    }

    #[test]
    fn the_review_takes_its_days_and_refuses_nonsense() {
        let review = get(
            GLUCOSE_REVIEW,
            Some(&arguments(serde_json::json!({ "days": "7" }))),
            "UTC",
        )
        .unwrap();
        assert!(text(&review).contains("last 7 days"));
        let default = get(GLUCOSE_REVIEW, None, "UTC").unwrap();
        assert!(text(&default).contains("last 14 days"));
        for bad in [
            serde_json::json!({ "days": "0" }),
            serde_json::json!({ "days": "x" }),
            serde_json::json!({ "weeks": "2" }),
        ] {
            assert!(get(GLUCOSE_REVIEW, Some(&arguments(bad)), "UTC").is_err());
        }
    }

    #[test]
    fn last_night_takes_a_date_and_refuses_anything_else() {
        let night = get(
            LAST_NIGHT,
            Some(&arguments(serde_json::json!({ "date": "2026-11-27" }))),
            "UTC",
        )
        .unwrap();
        assert!(text(&night).contains("the morning of 2026-11-27"));
        let error = get(
            LAST_NIGHT,
            Some(&arguments(
                serde_json::json!({ "date": "yesterday'; DROP" }),
            )),
            "UTC",
        )
        .unwrap_err();
        assert!(error.0.contains("YYYY-MM-DD"), "{error:?}");
        let long = "x".repeat(10_000);
        let error = get(&long, None, "UTC").unwrap_err();
        assert!(error.0.len() < 200, "{}", error.0);
    }
}

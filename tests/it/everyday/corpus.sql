-- Everyday analytics questions over tests/it/everyday/schema.sql, as an agent would write them.
--
-- tests/it/everyday_corpus.rs sends each entry to duckgate's `query` tool over MCP and compares the
-- rows and column names with the same SQL run on an in-process DuckDB over the same file, in the
-- same time zone (America/New_York). tests/it/everyday/check_corpus.py checks entries with DuckDB's
-- Python package while you write them (every entry runs and is deterministic).
--
-- Format: `-- name:` starts an entry (a unique snake_case name); the `-- key: value` lines right
-- after it are its headers; everything up to the next `-- name:` is one SQL statement (a final
-- `;` is dropped).
--   category: what the entry exercises (the test reports counts per category)
--   ordered:  yes when the statement orders its rows (a top-level ORDER BY): rows are compared
--             in order; otherwise they are compared as a multiset
--   expect:   refused for the one entry duckgate must refuse (the default: answered)
--   ask:      the question a person would ask (documentation only)
--
-- Keep results deterministic: ORDER BY unique keys before a LIMIT, ORDER BY inside list(),
-- string_agg() and json_group_array(), a seed on every sample, and no bare now() in the output
-- (a value that depends on the exact microsecond differs between the two runs).

-------------------------------------------------------------------------------------------------
-- Relative dates, in local time
-------------------------------------------------------------------------------------------------

-- name: readings_today
-- category: relative_dates
-- ask: How many readings do I have today, and what is my average so far?
SELECT count(*) AS readings, round(avg(glucose), 1) AS mean_glucose
FROM cgm_readings
WHERE read_at::DATE = current_date;

-- name: yesterday_per_patient
-- category: relative_dates
-- ordered: yes
-- ask: How did everyone do yesterday?
SELECT patient_id, count(*) AS readings, min(glucose) AS lowest, max(glucose) AS highest,
       round(avg(glucose), 1) AS mean_glucose
FROM cgm_readings
WHERE read_at::DATE = current_date - 1
GROUP BY patient_id
ORDER BY patient_id;

-- name: yesterday_via_date_trunc
-- category: relative_dates
-- ordered: yes
-- ask: Yesterday's low and high readings, by person
SELECT patient_id, count(*) FILTER (glucose < 70) AS lows, count(*) FILTER (glucose > 180) AS highs
FROM cgm_readings
WHERE read_at >= date_trunc('day', now()) - INTERVAL 1 DAY
  AND read_at < date_trunc('day', now())
GROUP BY patient_id
ORDER BY patient_id;

-- name: time_in_range_last_7_days
-- category: relative_dates
-- ordered: yes
-- ask: What was my time in range over the last 7 days?
SELECT patient_id,
       round(100.0 * count(*) FILTER (glucose BETWEEN 70 AND 180) / count(*), 1) AS tir_pct
FROM cgm_readings
WHERE read_at >= now() - INTERVAL 7 DAY
GROUP BY patient_id
ORDER BY patient_id;

-- name: daily_mean_last_7_local_days
-- category: relative_dates
-- ordered: yes
-- ask: Daily average for each of the last 7 full days
SELECT read_at::DATE AS day, count(*) AS readings, round(avg(glucose), 1) AS mean_glucose
FROM cgm_readings
WHERE read_at::DATE BETWEEN current_date - 7 AND current_date - 1
GROUP BY day
ORDER BY day;

-- name: this_week_so_far
-- category: relative_dates
-- ordered: yes
-- ask: How is this week going so far?
SELECT patient_id, count(*) AS readings, round(avg(glucose), 1) AS mean_glucose
FROM cgm_readings
WHERE read_at >= date_trunc('week', now())
GROUP BY patient_id
ORDER BY patient_id;

-- name: last_calendar_month
-- category: relative_dates
-- ordered: yes
-- ask: What was my average last month?
SELECT patient_id, count(*) AS readings, round(avg(glucose), 1) AS mean_glucose
FROM cgm_readings
WHERE read_at >= date_trunc('month', now()) - INTERVAL 1 MONTH
  AND read_at < date_trunc('month', now())
GROUP BY patient_id
ORDER BY patient_id;

-- name: mean_by_local_month
-- category: relative_dates
-- ordered: yes
-- ask: Average glucose per month
SELECT date_trunc('month', read_at) AS month, patient_id, round(avg(glucose), 1) AS mean_glucose
FROM cgm_readings
GROUP BY ALL
ORDER BY month, patient_id;

-- name: last_24_hours_range
-- category: relative_dates
-- ordered: yes
-- ask: Lowest and highest in the last 24 hours
SELECT patient_id, min(glucose) AS lowest, max(glucose) AS highest, count(*) AS readings
FROM cgm_readings
WHERE read_at > now() - INTERVAL 24 HOUR
GROUP BY patient_id
ORDER BY patient_id;

-- name: last_3_hours_readings
-- category: relative_dates
-- ordered: yes
-- ask: Show Alex's readings from the last 3 hours
SELECT read_at, glucose, trend
FROM cgm_readings
WHERE patient_id = 1 AND read_at >= now() - INTERVAL 3 HOUR
ORDER BY read_at;

-- name: latest_reading_per_patient
-- category: relative_dates
-- ordered: yes
-- ask: What is everyone's latest reading?
SELECT patient_id, max(read_at) AS latest_at, arg_max(glucose, read_at) AS latest_glucose,
       arg_max(trend, read_at) AS latest_trend
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: sensor_is_live
-- category: relative_dates
-- ordered: yes
-- ask: Is each sensor still sending data?
SELECT patient_id, date_diff('minute', max(read_at), now()) < 15 AS sensor_is_live
FROM cgm_readings
GROUP BY ALL
ORDER BY ALL;

-- name: mornings_yesterday
-- category: relative_dates
-- ordered: yes
-- ask: How was yesterday morning between 6 and 9?
SELECT patient_id, round(avg(glucose), 1) AS mean_glucose, max(glucose) AS peak
FROM cgm_readings
WHERE read_at::DATE = current_date - INTERVAL 1 DAY
  AND hour(read_at) BETWEEN 6 AND 8
GROUP BY patient_id
ORDER BY patient_id;

-- name: today_vs_yesterday
-- category: relative_dates
-- ordered: yes
-- ask: Compare today with yesterday
SELECT CASE WHEN read_at::DATE = current_date THEN 'today' ELSE 'yesterday' END AS day,
       count(*) AS readings,
       round(avg(glucose), 1) AS mean_glucose
FROM cgm_readings
WHERE read_at::DATE >= current_date - 1
GROUP BY 1
ORDER BY 1;

-- name: last_14_days_by_weekday
-- category: relative_dates
-- ordered: yes
-- ask: Which weekday is worst over the last two weeks?
SELECT dayname(read_at) AS weekday, isodow(read_at) AS weekday_no, round(avg(glucose), 1) AS mean_glucose
FROM cgm_readings
WHERE read_at >= current_date - 14 AND read_at < current_date
GROUP BY ALL
ORDER BY weekday_no;

-- name: boluses_today
-- category: relative_dates
-- ask: How much insulin and how many carbs today?
SELECT count(*) AS boluses, sum(units) AS total_units, sum(carbs_g) AS carbs_g
FROM boluses
WHERE given_at::DATE = current_date;

-- name: bolus_insulin_per_day_last_week
-- category: relative_dates
-- ordered: yes
-- ask: Bolus insulin and carbs per day this past week, for Alex
SELECT given_at::DATE AS day, sum(units) AS bolus_units, sum(carbs_g) AS carbs_g, count(*) AS boluses
FROM boluses
WHERE patient_id = 1 AND given_at >= current_date - 7
GROUP BY day
ORDER BY day;

-- name: alarms_since_monday
-- category: relative_dates
-- ordered: yes
-- ask: Which alarms went off since Monday?
SELECT details->>'code' AS code, count(*) AS alarms
FROM pump_events
WHERE event_type = 'alarm' AND occurred_at >= date_trunc('week', current_date)
GROUP BY code
ORDER BY code;

-- name: days_since_site_change
-- category: relative_dates
-- ordered: yes
-- ask: How many days since each pump site change?
SELECT patient_id, current_date - max(occurred_at)::DATE AS days_since_site_change
FROM pump_events
WHERE event_type = 'site_change'
GROUP BY ALL
ORDER BY ALL;

-- name: journal_last_week
-- category: relative_dates
-- ordered: yes
-- ask: What did Sam write in the journal this past week?
SELECT noted_at::DATE AS day, note
FROM journal
WHERE patient_id = 2 AND noted_at >= now() - INTERVAL 7 DAY
ORDER BY noted_at;

-- name: calendar_today
-- category: relative_dates
-- ask: What day is it, and when did this week start?
SELECT current_date AS today, today() AS also_today, date_trunc('week', current_date) AS week_start,
       dayname(current_date) AS weekday, yearweek(current_date) AS year_week;

-- name: hours_covered_today
-- category: relative_dates
-- ordered: yes
-- ask: How many hours of sensor data today?
SELECT patient_id, round(count(*) * 5 / 60.0, 2) AS hours_covered
FROM cgm_readings
WHERE read_at >= date_trunc('day', now())
GROUP BY ALL
ORDER BY ALL;

-- name: last_7_vs_previous_7
-- category: relative_dates
-- ordered: yes
-- ask: Is this week better than the week before?
SELECT patient_id,
       round(avg(glucose) FILTER (read_at >= now() - INTERVAL 7 DAY), 1) AS last_7_days,
       round(avg(glucose) FILTER (read_at < now() - INTERVAL 7 DAY), 1) AS previous_7_days
FROM cgm_readings
WHERE read_at >= now() - INTERVAL 14 DAY
GROUP BY patient_id
ORDER BY patient_id;

-- name: gmi_last_30_days
-- category: relative_dates
-- ordered: yes
-- ask: My GMI over the last 30 days
SELECT patient_id, round(3.31 + 0.02392 * avg(glucose), 2) AS gmi_pct, count(*) AS readings
FROM cgm_readings
WHERE read_at >= current_date - INTERVAL 30 DAY
GROUP BY patient_id
ORDER BY patient_id;

-- name: all_readings_yesterday
-- category: relative_dates
-- ordered: yes
-- ask: Give me all of yesterday's readings
SELECT patient_id, read_at, glucose, trend
FROM cgm_readings
WHERE read_at::DATE = current_date - 1
ORDER BY patient_id, read_at;

-- name: same_hour_each_day_this_week
-- category: relative_dates
-- ordered: yes
-- ask: What was I at around 7 am on each day this week?
SELECT read_at::DATE AS day, round(avg(glucose), 1) AS glucose_7am
FROM cgm_readings
WHERE patient_id = 3 AND hour(read_at) = 7 AND read_at >= date_trunc('week', now()) - INTERVAL 7 DAY
GROUP BY day
ORDER BY day;

-------------------------------------------------------------------------------------------------
-- Time zones
-------------------------------------------------------------------------------------------------

-- name: hourly_mean_local_time
-- category: time_zones
-- ordered: yes
-- ask: Average glucose by hour of the day
SELECT hour(read_at) AS local_hour, round(avg(glucose), 1) AS mean_glucose, count(*) AS readings
FROM cgm_readings
GROUP BY ALL
ORDER BY ALL;

-- name: hour_via_at_time_zone
-- category: time_zones
-- ordered: yes
-- ask: Lows by hour of the day in New York time
SELECT extract(hour FROM read_at AT TIME ZONE 'America/New_York') AS hour, count(*) AS lows
FROM cgm_readings
WHERE glucose < 70
GROUP BY 1
ORDER BY 1;

-- name: utc_vs_local_hour
-- category: time_zones
-- ordered: yes
-- ask: How many readings fall in each UTC hour against each local hour?
SELECT hour(read_at AT TIME ZONE 'UTC') AS utc_hour, hour(read_at) AS local_hour, count(*) AS readings
FROM cgm_readings
WHERE patient_id = 1
GROUP BY ALL
ORDER BY ALL;

-- name: strftime_local_clock
-- category: time_zones
-- ordered: yes
-- ask: Jordan's last hour of readings, with the local clock time
SELECT strftime(read_at, '%Y-%m-%d %H:%M') AS local_time, glucose
FROM cgm_readings
WHERE patient_id = 3
ORDER BY read_at DESC
LIMIT 12;

-- name: timezone_function_wall_clocks
-- category: time_zones
-- ordered: yes
-- ask: What time was that reading in UTC and in California?
SELECT reading_id, read_at, timezone('UTC', read_at) AS utc_wall_clock,
       timezone('America/Los_Angeles', read_at) AS pacific_wall_clock, glucose
FROM cgm_readings
WHERE reading_id IN (1, 5000, 20000, 29000)
ORDER BY reading_id;

-- name: lows_by_home_time_zone_hour
-- category: time_zones
-- ordered: yes
-- ask: Night-time lows in each person's own time zone
SELECT p.display_name, count(*) AS night_lows
FROM cgm_readings r
JOIN patients p USING (patient_id)
WHERE r.glucose < 70 AND hour(r.read_at AT TIME ZONE p.home_time_zone) < 6
GROUP BY p.display_name
ORDER BY p.display_name;

-- name: night_lows_local
-- category: time_zones
-- ordered: yes
-- ask: How often do I go low overnight (midnight to 6 am)?
SELECT patient_id, count(*) FILTER (glucose < 70) AS night_low_readings,
       count(DISTINCT read_at::DATE) FILTER (glucose < 70) AS nights_with_lows
FROM cgm_readings
WHERE hour(read_at) < 6
GROUP BY patient_id
ORDER BY patient_id;

-- name: utc_offsets_in_data
-- category: time_zones
-- ordered: yes
-- ask: Which UTC offsets does my data span (daylight saving)?
SELECT strftime(read_at, '%z') AS utc_offset, count(*) AS readings, min(read_at) AS first_at
FROM cgm_readings
GROUP BY 1
ORDER BY 1;

-- name: local_day_vs_utc_day
-- category: time_zones
-- ordered: yes
-- ask: How do readings split across local and UTC calendar days?
SELECT read_at::DATE AS local_day, (read_at AT TIME ZONE 'UTC')::DATE AS utc_day, count(*) AS readings
FROM cgm_readings
WHERE patient_id = 2 AND read_at >= now() - INTERVAL 2 DAY
GROUP BY ALL
ORDER BY ALL;

-- name: spring_forward_arithmetic
-- category: time_zones
-- ask: What is one hour after 1:30 am on the night clocks spring forward?
SELECT TIMESTAMPTZ '2025-03-09 01:30:00 America/New_York' + INTERVAL 1 HOUR AS one_hour_later,
       TIMESTAMPTZ '2025-03-08 12:00:00 America/New_York' + INTERVAL 1 DAY AS next_day_same_clock,
       TIMESTAMPTZ '2025-03-08 12:00:00 America/New_York' + INTERVAL 24 HOUR AS twenty_four_hours_later;

-- name: fall_back_day_length
-- category: time_zones
-- ask: How long was the day clocks fell back?
SELECT TIMESTAMPTZ '2025-11-03 00:00:00 America/New_York' - TIMESTAMPTZ '2025-11-02 00:00:00 America/New_York' AS day_length,
       date_diff('hour', TIMESTAMPTZ '2025-11-02 00:00:00 America/New_York', TIMESTAMPTZ '2025-11-03 00:00:00 America/New_York') AS hours;

-- name: local_midnights
-- category: time_zones
-- ordered: yes
-- ask: Readings per local day for Alex, with the day's start as a timestamp
SELECT date_trunc('day', read_at) AS local_midnight, count(*) AS readings
FROM cgm_readings
WHERE patient_id = 1
GROUP BY 1
ORDER BY 1;

-- name: time_bucket_hourly_local
-- category: time_zones
-- ordered: yes
-- ask: Hourly averages for Sam over the last 12 hours
SELECT time_bucket(INTERVAL 1 HOUR, read_at) AS hour_start, round(avg(glucose), 1) AS mean_glucose
FROM cgm_readings
WHERE patient_id = 2 AND read_at >= now() - INTERVAL 12 HOUR
GROUP BY 1
ORDER BY 1;

-- name: tokyo_clock
-- category: time_zones
-- ordered: yes
-- ask: If I were in Tokyo, at what local times were my last readings?
SELECT reading_id, strftime(read_at AT TIME ZONE 'Asia/Tokyo', '%Y-%m-%d %H:%M') AS tokyo_time, glucose
FROM cgm_readings
WHERE patient_id = 1
ORDER BY read_at DESC
LIMIT 5;

-- name: timezone_hour_part
-- category: time_zones
-- ordered: yes
-- ask: Which UTC offsets (in hours) do Jordan's readings carry?
SELECT date_part('timezone_hour', read_at) AS offset_hours, count(*) AS readings
FROM cgm_readings
WHERE patient_id = 3
GROUP BY 1
ORDER BY 1;

-- name: make_timestamptz_in_zone
-- category: time_zones
-- ask: Build a timestamp for 8 am New York time and 8 am Chicago time
SELECT make_timestamptz(2026, 7, 4, 8, 0, 0.0, 'America/New_York') AS ny_8am,
       make_timestamptz(2026, 7, 4, 8, 0, 0.0, 'America/Chicago') AS chicago_8am,
       make_timestamptz(2026, 7, 4, 8, 0, 0.0, 'America/Chicago') - make_timestamptz(2026, 7, 4, 8, 0, 0.0, 'America/New_York') AS difference;

-- name: local_time_of_first_reading_each_day
-- category: time_zones
-- ordered: yes
-- ask: When did the first reading of each day arrive, local time?
SELECT read_at::DATE AS day, strftime(min(read_at), '%H:%M') AS first_reading
FROM cgm_readings
WHERE patient_id = 1
GROUP BY day
ORDER BY day;

-------------------------------------------------------------------------------------------------
-- Consensus CGM metrics
-------------------------------------------------------------------------------------------------

-- name: consensus_ranges
-- category: cgm_metrics
-- ordered: yes
-- ask: Time below, in and above range for each person (the international consensus ranges)
SELECT patient_id,
       round(100.0 * count(*) FILTER (glucose < 54) / count(*), 1) AS very_low_pct,
       round(100.0 * count(*) FILTER (glucose BETWEEN 54 AND 69) / count(*), 1) AS low_pct,
       round(100.0 * count(*) FILTER (glucose BETWEEN 70 AND 180) / count(*), 1) AS in_range_pct,
       round(100.0 * count(*) FILTER (glucose BETWEEN 181 AND 250) / count(*), 1) AS high_pct,
       round(100.0 * count(*) FILTER (glucose > 250) / count(*), 1) AS very_high_pct
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: gmi_per_patient
-- category: cgm_metrics
-- ordered: yes
-- ask: What is each person's glucose management indicator?
SELECT patient_id, round(avg(glucose), 1) AS mean_glucose, round(3.31 + 0.02392 * avg(glucose), 2) AS gmi_pct
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: coefficient_of_variation
-- category: cgm_metrics
-- ordered: yes
-- ask: Is my glucose stable (CV at or under 36%)?
SELECT patient_id,
       round(100 * stddev_samp(glucose) / avg(glucose), 1) AS cv_pct,
       100 * stddev_samp(glucose) / avg(glucose) <= 36 AS stable
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: mean_sd_exact
-- category: cgm_metrics
-- ordered: yes
-- ask: Mean and standard deviation, unrounded
SELECT patient_id, avg(glucose) AS mean_glucose, stddev(glucose) AS sd, count(*) AS n
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: agp_percentiles_by_hour
-- category: cgm_metrics
-- ordered: yes
-- ask: My ambulatory glucose profile for the last 14 days (5/25/50/75/95th percentiles by hour)
SELECT hour(read_at) AS hour,
       quantile_cont(glucose, 0.05) AS p5,
       quantile_cont(glucose, 0.25) AS p25,
       quantile_cont(glucose, 0.50) AS median,
       quantile_cont(glucose, 0.75) AS p75,
       quantile_cont(glucose, 0.95) AS p95
FROM cgm_readings
WHERE patient_id = 1 AND read_at >= now() - INTERVAL 14 DAY
GROUP BY ALL
ORDER BY hour;

-- name: agp_percentile_list
-- category: cgm_metrics
-- ordered: yes
-- ask: The AGP percentiles as one list per hour, for everyone
SELECT patient_id, hour(read_at) AS hour, quantile_cont(glucose, [0.05, 0.25, 0.5, 0.75, 0.95]) AS percentiles
FROM cgm_readings
GROUP BY ALL
ORDER BY ALL;

-- name: agp_quantile_disc
-- category: cgm_metrics
-- ordered: yes
-- ask: Actual reading values at the 10th, 50th and 90th percentile by 3-hour block
SELECT hour(read_at) // 3 * 3 AS block_start_hour,
       quantile_disc(glucose, 0.1) AS p10,
       quantile_disc(glucose, 0.5) AS p50,
       quantile_disc(glucose, 0.9) AS p90
FROM cgm_readings
WHERE patient_id = 2
GROUP BY 1
ORDER BY 1;

-- name: daily_time_in_range_last_14_days
-- category: cgm_metrics
-- ordered: yes
-- ask: Daily time in range for the last two weeks
SELECT read_at::DATE AS day, patient_id,
       round(100.0 * count(*) FILTER (glucose BETWEEN 70 AND 180) / count(*), 1) AS tir_pct
FROM cgm_readings
WHERE read_at::DATE >= current_date - 14
GROUP BY ALL
ORDER BY day, patient_id;

-- name: sensor_wear_time
-- category: cgm_metrics
-- ordered: yes
-- ask: What share of the last 14 days did the sensor record (aim for 70%+)?
SELECT patient_id, round(100.0 * count(*) / (14 * 288), 1) AS active_pct
FROM cgm_readings
WHERE read_at > now() - INTERVAL 14 DAY
GROUP BY patient_id
ORDER BY patient_id;

-- name: low_and_high_blood_glucose_index
-- category: cgm_metrics
-- ordered: yes
-- ask: My LBGI and HBGI risk indices
WITH risk AS (
    SELECT patient_id, 1.509 * (pow(ln(glucose), 1.084) - 5.381) AS f
    FROM cgm_readings
)
SELECT patient_id,
       round(avg(CASE WHEN f < 0 THEN 10 * f * f ELSE 0 END), 2) AS lbgi,
       round(avg(CASE WHEN f > 0 THEN 10 * f * f ELSE 0 END), 2) AS hbgi
FROM risk
GROUP BY patient_id
ORDER BY patient_id;

-- name: time_in_tight_range
-- category: cgm_metrics
-- ordered: yes
-- ask: Time in tight range (70-140)
SELECT patient_id, round(100.0 * avg((glucose BETWEEN 70 AND 140)::INTEGER), 1) AS titr_pct
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: weekly_report_card
-- category: cgm_metrics
-- ordered: yes
-- ask: Weekly mean, GMI and time in range
SELECT date_trunc('week', read_at) AS week, patient_id,
       round(avg(glucose), 1) AS mean_glucose,
       round(3.31 + 0.02392 * avg(glucose), 2) AS gmi,
       round(100.0 * count(*) FILTER (glucose BETWEEN 70 AND 180) / count(*), 1) AS tir_pct
FROM cgm_readings
GROUP BY ALL
ORDER BY week, patient_id;

-- name: minutes_below_70_per_day
-- category: cgm_metrics
-- ordered: yes
-- ask: Minutes spent below 70 each day for Sam
SELECT read_at::DATE AS day, 5 * count(*) FILTER (glucose < 70) AS minutes_low
FROM cgm_readings
WHERE patient_id = 2
GROUP BY day
ORDER BY day;

-- name: mean_by_trend_arrow
-- category: cgm_metrics
-- ordered: yes
-- ask: Average glucose for each trend arrow
SELECT coalesce(trend, '(none)') AS trend, count(*) AS readings, round(avg(glucose), 1) AS mean_glucose
FROM cgm_readings
GROUP BY 1
ORDER BY readings DESC, trend;

-- name: daily_view_low_tir_days
-- category: cgm_metrics
-- ordered: yes
-- ask: Which days had time in range under 75%?
SELECT patient_id, day, readings, mean_glucose, pct_in_range
FROM daily_glucose
WHERE pct_in_range < 75
ORDER BY patient_id, day;

-- name: consensus_targets_met
-- category: cgm_metrics
-- ordered: yes
-- ask: Does each person meet the consensus targets (TIR > 70%, TBR < 4%, < 54 under 1%)?
WITH m AS (
    SELECT patient_id,
           100.0 * count(*) FILTER (glucose BETWEEN 70 AND 180) / count(*) AS tir,
           100.0 * count(*) FILTER (glucose < 70) / count(*) AS tbr,
           100.0 * count(*) FILTER (glucose < 54) / count(*) AS tbr54
    FROM cgm_readings
    GROUP BY patient_id
)
SELECT patient_id, tir > 70 AS tir_ok, tbr < 4 AS tbr_ok, tbr54 < 1 AS very_low_ok,
       tir > 70 AND tbr < 4 AND tbr54 < 1 AS all_targets_met
FROM m
ORDER BY patient_id;

-- name: j_index
-- category: cgm_metrics
-- ordered: yes
-- ask: J-index per person
SELECT patient_id, round(0.001 * pow(avg(glucose) + stddev_samp(glucose), 2), 1) AS j_index
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: lows_by_part_of_day
-- category: cgm_metrics
-- ordered: yes
-- ask: When do my lows happen: night, morning, afternoon or evening?
SELECT CASE WHEN hour(read_at) < 6 THEN '1 night'
            WHEN hour(read_at) < 12 THEN '2 morning'
            WHEN hour(read_at) < 18 THEN '3 afternoon'
            ELSE '4 evening' END AS part_of_day,
       count(*) FILTER (glucose < 70) AS low_readings,
       count(*) AS readings
FROM cgm_readings
GROUP BY 1
ORDER BY 1;

-- name: highest_daily_peaks
-- category: cgm_metrics
-- ordered: yes
-- ask: My five worst daily peaks
SELECT patient_id, read_at::DATE AS day, max(glucose) AS peak
FROM cgm_readings
GROUP BY ALL
ORDER BY peak DESC, patient_id, day
LIMIT 5;

-- name: mean_absolute_rate_of_change
-- category: cgm_metrics
-- ordered: yes
-- ask: How fast does my glucose move on average (mg/dL per minute)?
WITH d AS (
    SELECT patient_id,
           (glucose - lag(glucose) OVER w) / 5.0 AS rate,
           read_at - lag(read_at) OVER w AS step
    FROM cgm_readings
    WINDOW w AS (PARTITION BY patient_id ORDER BY read_at)
)
SELECT patient_id, round(avg(abs(rate)), 3) AS mean_abs_rate
FROM d
WHERE step = INTERVAL 5 MINUTE
GROUP BY patient_id
ORDER BY patient_id;

-- name: estimated_a1c_by_month
-- category: cgm_metrics
-- ordered: yes
-- ask: Estimated A1c (ADAG formula) per month
SELECT strftime(read_at, '%Y-%m') AS month, patient_id, round((avg(glucose) + 46.7) / 28.7, 2) AS estimated_a1c
FROM cgm_readings
GROUP BY ALL
ORDER BY ALL;

-------------------------------------------------------------------------------------------------
-- Episodes (gaps and islands)
-------------------------------------------------------------------------------------------------

-- name: hypo_episodes_15_minutes
-- category: episodes
-- ordered: yes
-- ask: List my hypo episodes (under 70 for at least 15 minutes)
WITH flagged AS (
    SELECT patient_id, read_at, glucose, glucose < 70 AS low,
           lag(glucose < 70) OVER w AS previous_low,
           lag(read_at) OVER w AS previous_at
    FROM cgm_readings
    WINDOW w AS (PARTITION BY patient_id ORDER BY read_at)
),
numbered AS (
    SELECT *,
           sum(CASE WHEN low AND (previous_low IS DISTINCT FROM true OR read_at - previous_at > INTERVAL 5 MINUTE)
                    THEN 1 ELSE 0 END) OVER (PARTITION BY patient_id ORDER BY read_at) AS episode
    FROM flagged
)
SELECT patient_id, episode, min(read_at) AS started_at,
       max(read_at) - min(read_at) + INTERVAL 5 MINUTE AS duration,
       min(glucose) AS nadir, count(*) AS readings
FROM numbered
WHERE low
GROUP BY patient_id, episode
HAVING max(read_at) - min(read_at) + INTERVAL 5 MINUTE >= INTERVAL 15 MINUTE
ORDER BY patient_id, started_at;

-- name: hypo_islands_row_number_difference
-- category: episodes
-- ordered: yes
-- ask: Hypo episodes per person, counted with the row-number trick
WITH r AS (
    SELECT patient_id, read_at, glucose,
           row_number() OVER (PARTITION BY patient_id ORDER BY read_at)
         - row_number() OVER (PARTITION BY patient_id, glucose < 70 ORDER BY read_at) AS island
    FROM cgm_readings
),
islands AS (
    SELECT patient_id, island, count(*) AS readings, min(glucose) AS nadir
    FROM r
    WHERE glucose < 70
    GROUP BY ALL
)
SELECT patient_id, count(*) AS episodes, count(*) FILTER (readings >= 3) AS episodes_15_min_plus,
       min(nadir) AS lowest
FROM islands
GROUP BY patient_id
ORDER BY patient_id;

-- name: hypo_episode_summary
-- category: episodes
-- ordered: yes
-- ask: How many hypos of 15+ minutes, and how long do they last on average?
WITH marks AS (
    SELECT patient_id, read_at, glucose,
           CASE WHEN glucose < 70 AND coalesce(lag(glucose) OVER w, 999) >= 70 THEN 1 ELSE 0 END AS starts
    FROM cgm_readings
    WINDOW w AS (PARTITION BY patient_id ORDER BY read_at)
),
episodes AS (
    SELECT patient_id, sum(starts) OVER (PARTITION BY patient_id ORDER BY read_at) AS episode, read_at, glucose
    FROM marks
)
SELECT patient_id, count(*) AS episodes, round(avg(minutes), 1) AS mean_minutes, max(minutes) AS longest_minutes
FROM (
    SELECT patient_id, episode, 5 * count(*) AS minutes
    FROM episodes
    WHERE glucose < 70
    GROUP BY ALL
    HAVING count(*) >= 3
)
GROUP BY patient_id
ORDER BY patient_id;

-- name: hyper_episodes_over_250
-- category: episodes
-- ordered: yes
-- ask: When was I over 250 for at least 30 minutes?
WITH r AS (
    SELECT patient_id, read_at, glucose,
           row_number() OVER (PARTITION BY patient_id ORDER BY read_at)
         - row_number() OVER (PARTITION BY patient_id, glucose > 250 ORDER BY read_at) AS island
    FROM cgm_readings
)
SELECT patient_id, min(read_at) AS started_at, max(read_at) AS ended_at, max(glucose) AS peak, count(*) AS readings
FROM r
WHERE glucose > 250
GROUP BY patient_id, island
HAVING count(*) >= 6
ORDER BY patient_id, started_at;

-- name: sensor_gaps
-- category: episodes
-- ordered: yes
-- ask: When did my sensor stop sending data for 30 minutes or more?
SELECT patient_id, read_at AS last_before_gap, next_at AS first_after_gap, next_at - read_at AS gap
FROM (
    SELECT patient_id, read_at, lead(read_at) OVER (PARTITION BY patient_id ORDER BY read_at) AS next_at
    FROM cgm_readings
)
WHERE next_at - read_at >= INTERVAL 30 MINUTE
ORDER BY patient_id, read_at;

-- name: sensor_sessions
-- category: episodes
-- ordered: yes
-- ask: Split the data into continuous sessions (a gap of over an hour starts a new one)
WITH g AS (
    SELECT patient_id, read_at, device_id,
           CASE WHEN read_at - lag(read_at) OVER (PARTITION BY patient_id ORDER BY read_at) <= INTERVAL 1 HOUR
                THEN 0 ELSE 1 END AS new_session
    FROM cgm_readings
),
s AS (
    SELECT *, sum(new_session) OVER (PARTITION BY patient_id ORDER BY read_at) AS session
    FROM g
)
SELECT patient_id, session, min(read_at) AS started_at, max(read_at) AS ended_at, count(*) AS readings,
       string_agg(DISTINCT device_id, ', ' ORDER BY device_id) AS devices
FROM s
GROUP BY ALL
ORDER BY patient_id, session;

-- name: nocturnal_hypo_start_times
-- category: episodes
-- ordered: yes
-- ask: At what local time do my night-time lows start?
WITH r AS (
    SELECT patient_id, read_at, glucose,
           row_number() OVER (PARTITION BY patient_id ORDER BY read_at)
         - row_number() OVER (PARTITION BY patient_id, glucose < 70 ORDER BY read_at) AS island
    FROM cgm_readings
),
episodes AS (
    SELECT patient_id, island, min(read_at) AS started_at
    FROM r
    WHERE glucose < 70
    GROUP BY ALL
    HAVING count(*) >= 3 AND hour(min(read_at)) < 6
)
SELECT strftime(started_at, '%H:%M') AS starts_at_local, count(*) AS episodes
FROM episodes
GROUP BY 1
ORDER BY 1;

-- name: recovery_after_hypo
-- category: episodes
-- ordered: yes
-- ask: After each low ends, how long until I was back at 80+?
WITH r AS (
    SELECT patient_id, read_at, glucose,
           row_number() OVER (PARTITION BY patient_id ORDER BY read_at)
         - row_number() OVER (PARTITION BY patient_id, glucose < 70 ORDER BY read_at) AS island
    FROM cgm_readings
),
episodes AS (
    SELECT patient_id, max(read_at) AS last_low_at
    FROM r
    WHERE glucose < 70
    GROUP BY patient_id, island
),
recovered AS (
    SELECT patient_id, read_at FROM cgm_readings WHERE glucose >= 80
)
SELECT e.patient_id, count(*) AS episodes,
       round(avg(date_diff('minute', e.last_low_at, x.read_at)), 1) AS mean_minutes_to_80
FROM episodes e
ASOF JOIN recovered x ON e.patient_id = x.patient_id AND e.last_low_at < x.read_at
GROUP BY e.patient_id
ORDER BY e.patient_id;

-- name: longest_in_range_streak
-- category: episodes
-- ordered: yes
-- ask: My longest streak in range
WITH r AS (
    SELECT patient_id, read_at, glucose BETWEEN 70 AND 180 AS in_range,
           row_number() OVER (PARTITION BY patient_id ORDER BY read_at)
         - row_number() OVER (PARTITION BY patient_id, glucose BETWEEN 70 AND 180 ORDER BY read_at) AS island
    FROM cgm_readings
)
SELECT patient_id, max(hours) AS longest_hours
FROM (
    SELECT patient_id, island, count(*) * 5 / 60.0 AS hours
    FROM r
    WHERE in_range
    GROUP BY ALL
)
GROUP BY patient_id
ORDER BY patient_id;

-- name: hypos_after_suspend
-- category: episodes
-- ordered: yes
-- ask: Did the pump's low-glucose suspend prevent lows? Lowest reading in the hour after each suspend
SELECT e.patient_id, count(*) AS suspends,
       count(*) FILTER (lowest < 70) AS followed_by_low,
       min(lowest) AS lowest_after_suspend
FROM (
    SELECT s.patient_id, s.event_id, min(r.glucose) AS lowest
    FROM pump_events s
    JOIN cgm_readings r
      ON r.patient_id = s.patient_id
     AND r.read_at BETWEEN s.occurred_at AND s.occurred_at + INTERVAL 1 HOUR
    WHERE s.event_type = 'suspend'
    GROUP BY ALL
) e
GROUP BY e.patient_id
ORDER BY e.patient_id;

-------------------------------------------------------------------------------------------------
-- ASOF joins: readings against the basal rate in force, boluses against readings
-------------------------------------------------------------------------------------------------

-- name: basal_rate_at_each_reading
-- category: asof_joins
-- ordered: yes
-- ask: Show Sam's readings of the last 6 hours with the basal rate that was running
SELECT r.read_at, r.glucose, b.units_per_hour, b.reason
FROM cgm_readings r
ASOF JOIN basal_rates b
  ON r.patient_id = b.patient_id AND r.read_at >= b.starts_at
WHERE r.patient_id = 2 AND r.read_at >= now() - INTERVAL 6 HOUR
ORDER BY r.read_at;

-- name: mean_glucose_by_basal_reason
-- category: asof_joins
-- ordered: yes
-- ask: Is my glucose different while a temporary basal runs?
SELECT r.patient_id, b.reason, count(*) AS readings, round(avg(r.glucose), 1) AS mean_glucose
FROM cgm_readings r
ASOF JOIN basal_rates b
  ON r.patient_id = b.patient_id AND r.read_at >= b.starts_at
GROUP BY ALL
ORDER BY r.patient_id, b.reason;

-- name: readings_without_basal_history
-- category: asof_joins
-- ordered: yes
-- ask: How many readings came before the pump history starts?
SELECT r.patient_id, count(*) AS readings,
       count(*) FILTER (b.units_per_hour IS NULL) AS without_basal,
       min(r.read_at) FILTER (b.units_per_hour IS NOT NULL) AS first_matched
FROM cgm_readings r
ASOF LEFT JOIN basal_rates b
  ON r.patient_id = b.patient_id AND r.read_at >= b.starts_at
GROUP BY r.patient_id
ORDER BY r.patient_id;

-- name: glucose_at_bolus_time
-- category: asof_joins
-- ordered: yes
-- ask: What was my glucose when I took each of my last 10 boluses?
SELECT b.given_at, b.kind, b.units, r.glucose AS glucose_before, r.read_at AS reading_at
FROM boluses b
ASOF JOIN cgm_readings r
  ON b.patient_id = r.patient_id AND b.given_at >= r.read_at
WHERE b.patient_id = 1
ORDER BY b.given_at DESC
LIMIT 10;

-- name: glucose_two_hours_after_meals
-- category: asof_joins
-- ordered: yes
-- ask: How high am I two hours after each kind of meal?
SELECT b.meal, count(*) AS meals, round(avg(r.glucose), 1) AS mean_2h_glucose,
       round(avg(r.glucose - pre.glucose), 1) AS mean_rise
FROM boluses b
ASOF JOIN cgm_readings r
  ON b.patient_id = r.patient_id AND b.given_at + INTERVAL 2 HOUR <= r.read_at
ASOF JOIN cgm_readings pre
  ON b.patient_id = pre.patient_id AND b.given_at >= pre.read_at
WHERE b.kind = 'meal'
GROUP BY b.meal
ORDER BY b.meal;

-- name: asof_join_using
-- category: asof_joins
-- ordered: yes
-- ask: Basal rate for each of Jordan's readings this morning, joined by name
SELECT patient_id, read_at, glucose, units_per_hour
FROM cgm_readings
ASOF JOIN (SELECT patient_id, starts_at AS read_at, units_per_hour FROM basal_rates) AS b
  USING (patient_id, read_at)
WHERE patient_id = 3 AND read_at::DATE = current_date AND hour(read_at) BETWEEN 4 AND 5
ORDER BY read_at;

-- name: glucose_at_alarms
-- category: asof_joins
-- ordered: yes
-- ask: What was the glucose when each sensor alarm went off?
SELECT e.occurred_at, e.details->>'code' AS code, r.glucose, r.trend
FROM pump_events e
ASOF LEFT JOIN cgm_readings r
  ON e.patient_id = r.patient_id AND e.occurred_at >= r.read_at
WHERE e.event_type = 'alarm' AND e.details->>'code' LIKE 'SENSOR%'
ORDER BY e.occurred_at, e.event_id;

-- name: insulin_rate_by_local_hour
-- category: asof_joins
-- ordered: yes
-- ask: Average basal rate running at each hour of the day, against glucose
SELECT hour(r.read_at) AS hour, round(avg(b.units_per_hour), 3) AS mean_basal, round(avg(r.glucose), 1) AS mean_glucose
FROM cgm_readings r
ASOF JOIN basal_rates b
  ON r.patient_id = b.patient_id AND r.read_at >= b.starts_at
WHERE r.patient_id = 1
GROUP BY 1
ORDER BY 1;

-- name: next_basal_change_after_low
-- category: asof_joins
-- ordered: yes
-- ask: After a reading under 60, when was the next basal change?
SELECT r.patient_id, r.read_at, r.glucose, b.starts_at AS next_change, b.reason
FROM cgm_readings r
ASOF JOIN basal_rates b
  ON r.patient_id = b.patient_id AND r.read_at < b.starts_at
WHERE r.glucose < 50
ORDER BY r.patient_id, r.read_at;

-------------------------------------------------------------------------------------------------
-- JSON payloads
-------------------------------------------------------------------------------------------------

-- name: alarms_by_code
-- category: json
-- ordered: yes
-- ask: Which pump alarms do I get most?
SELECT details->>'code' AS code, details->>'severity' AS severity, count(*) AS alarms
FROM pump_events
WHERE event_type = 'alarm'
GROUP BY ALL
ORDER BY alarms DESC, code;

-- name: site_rotation
-- category: json
-- ordered: yes
-- ask: Where have I been placing my infusion sites?
SELECT patient_id, details->'site'->>'location' AS location, details->'site'->>'side' AS side, count(*) AS changes
FROM pump_events
WHERE event_type = 'site_change'
GROUP BY ALL
ORDER BY ALL;

-- name: bolus_wizard_ratios
-- category: json
-- ordered: yes
-- ask: What carb ratio and sensitivity did the bolus wizard use?
SELECT patient_id,
       json_extract(details, '$.ratios.icr') AS icr_json,
       json_extract_string(details, '$.ratios.isf') AS isf_text,
       count(*) AS calculations
FROM pump_events
WHERE event_type = 'bolus_wizard'
GROUP BY ALL
ORDER BY patient_id;

-- name: json_keys_per_event_type
-- category: json
-- ordered: yes
-- ask: What fields does each kind of pump event carry?
SELECT DISTINCT event_type, json_keys(details) AS keys
FROM pump_events
ORDER BY event_type, keys;

-- name: unnest_json_tags
-- category: json
-- ordered: yes
-- ask: Count the tags on pump events
SELECT tag, count(*) AS events
FROM (
    SELECT unnest(from_json(details->'tags', '["VARCHAR"]')) AS tag
    FROM pump_events
    WHERE (details->'tags') IS NOT NULL
)
GROUP BY tag
ORDER BY tag;

-- name: json_list_of_recent_alarm_codes
-- category: json
-- ordered: yes
-- ask: The codes of each person's last 5 alarms, oldest first, as a JSON array
SELECT patient_id, to_json(list(code ORDER BY occurred_at)) AS codes
FROM (
    SELECT patient_id, occurred_at, details->>'code' AS code
    FROM pump_events
    WHERE event_type = 'alarm'
    QUALIFY row_number() OVER (PARTITION BY patient_id ORDER BY occurred_at DESC) <= 5
)
GROUP BY patient_id
ORDER BY patient_id;

-- name: json_group_array_alarms_per_day
-- category: json
-- ordered: yes
-- ask: Alex's alarms per day over the last two weeks, as JSON
SELECT occurred_at::DATE AS day, json_group_array(details->>'code') AS codes, json_group_array(details) AS payloads
FROM pump_events
WHERE patient_id = 1 AND event_type = 'alarm' AND occurred_at >= current_date - 14
GROUP BY day
ORDER BY day;

-- name: json_group_object_event_counts
-- category: json
-- ordered: yes
-- ask: Event counts per type as one JSON object per person
SELECT patient_id, json_group_object(event_type, n) AS counts
FROM (
    SELECT patient_id, event_type, count(*) AS n
    FROM pump_events
    GROUP BY ALL
    ORDER BY event_type
)
GROUP BY patient_id
ORDER BY patient_id;

-- name: recommended_units_array_elements
-- category: json
-- ordered: yes
-- ask: The bolus wizard's carb and correction parts, for the last 5 calculations
SELECT occurred_at,
       details->'recommended_units'->0 AS carb_part,
       details->>'$.recommended_units[1]' AS correction_part,
       json_array_length(details->'recommended_units') AS parts
FROM pump_events
WHERE event_type = 'bolus_wizard'
ORDER BY occurred_at DESC, event_id
LIMIT 5;

-- name: json_tag_counts_per_event
-- category: json
-- ordered: yes
-- ask: How many tags does each alarm carry?
SELECT json_array_length(details->'tags') AS tags, count(*) AS events
FROM pump_events
WHERE event_type IN ('alarm', 'site_change')
GROUP BY 1
ORDER BY 1;

-- name: json_extract_list_of_paths
-- category: json
-- ordered: yes
-- ask: Blood glucose and carbs from each of the first 5 bolus wizard entries
SELECT event_id, json_extract(details, ['$.bg', '$.carbs_g']) AS bg_and_carbs
FROM pump_events
WHERE event_type = 'bolus_wizard'
ORDER BY event_id
LIMIT 5;

-- name: json_path_syntax_site_side
-- category: json
-- ordered: yes
-- ask: Left and right site changes
SELECT details->>'$.site.side' AS side, count(*) AS changes
FROM pump_events
WHERE event_type = 'site_change'
GROUP BY 1
ORDER BY 1;

-- name: json_each_keys
-- category: json
-- ordered: yes
-- ask: How often does each top-level key appear in pump event payloads?
SELECT j.key, count(*) AS occurrences
FROM pump_events e, json_each(e.details) AS j
GROUP BY j.key
ORDER BY j.key;

-- name: json_structure_per_type
-- category: json
-- ordered: yes
-- ask: What is the shape of each event type's payload?
SELECT DISTINCT event_type, json_structure(details) AS structure
FROM pump_events
ORDER BY event_type;

-- name: unacknowledged_critical_alarms
-- category: json
-- ordered: yes
-- ask: Critical alarms nobody acknowledged
SELECT patient_id, occurred_at, details->>'code' AS code
FROM pump_events
WHERE event_type = 'alarm'
  AND details->>'severity' = 'critical'
  AND NOT (details->>'acknowledged')::BOOLEAN
ORDER BY patient_id, occurred_at;

-- name: build_json_summary
-- category: json
-- ordered: yes
-- ask: One JSON document per person with their glucose summary
SELECT patient_id,
       json_object('mean', round(avg(glucose), 1), 'min', min(glucose), 'max', max(glucose),
                   'ranges', json_object('low', count(*) FILTER (glucose < 70), 'high', count(*) FILTER (glucose > 180))) AS summary
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: json_type_of_nullable_field
-- category: json
-- ordered: yes
-- ask: Which alarms carry a reservoir level?
SELECT json_type(details->'reservoir_units') AS reservoir_type, count(*) AS alarms,
       min((details->>'reservoir_units')::DOUBLE) AS lowest_reservoir
FROM pump_events
WHERE event_type = 'alarm'
GROUP BY 1
ORDER BY 1;

-- name: high_bg_at_wizard
-- category: json
-- ordered: yes
-- ask: How often was I above 180 when I used the bolus wizard, and did I override it?
SELECT patient_id,
       count(*) FILTER ((details->>'bg')::INTEGER > 180) AS above_180,
       count(*) FILTER ((details->'override')::BOOLEAN) AS overrides,
       round(avg((details->>'carbs_g')::INTEGER), 1) AS mean_carbs
FROM pump_events
WHERE event_type = 'bolus_wizard'
GROUP BY patient_id
ORDER BY patient_id;

-- name: from_json_to_struct
-- category: json
-- ordered: yes
-- ask: Turn the suspend payloads into typed columns
SELECT event_id, s.reason, s.duration_min, s.resumed.by AS resumed_by
FROM (
    SELECT event_id, from_json(details, '{"reason": "VARCHAR", "duration_min": "INTEGER", "resumed": {"by": "VARCHAR"}}') AS s
    FROM pump_events
    WHERE event_type = 'suspend'
)
ORDER BY event_id
LIMIT 8;

-- name: json_extract_string_nested
-- category: json
-- ordered: yes
-- ask: Who resumed the pump after suspends, the user or the pump?
SELECT json_extract_string(details, '$.resumed.by') AS resumed_by,
       count(*) AS suspends,
       avg(json_extract(details, '$.duration_min')::INTEGER) AS mean_minutes
FROM pump_events
WHERE event_type = 'suspend'
GROUP BY 1
ORDER BY 1;

-- name: battery_levels
-- category: json
-- ordered: yes
-- ask: Lowest pump battery level reported per person
SELECT patient_id, min((details->>'level_pct')::INTEGER) AS lowest_battery_pct, count(*) AS reports
FROM pump_events
WHERE event_type = 'battery'
GROUP BY patient_id
ORDER BY patient_id;

-- name: raw_json_payloads
-- category: json
-- ordered: yes
-- ask: Show me the raw payloads of the first few events
SELECT event_id, event_type, details
FROM pump_events
ORDER BY event_id
LIMIT 6;

-------------------------------------------------------------------------------------------------
-- Window functions
-------------------------------------------------------------------------------------------------

-- name: rolling_hour_average_range_frame
-- category: windows
-- ordered: yes
-- ask: One-hour rolling average for Alex over the last 6 hours
SELECT read_at, glucose,
       round(avg(glucose) OVER (ORDER BY read_at RANGE BETWEEN INTERVAL 1 HOUR PRECEDING AND CURRENT ROW), 1) AS rolling_1h
FROM cgm_readings
WHERE patient_id = 1 AND read_at >= now() - INTERVAL 6 HOUR
ORDER BY read_at;

-- name: rolling_rows_frame
-- category: windows
-- ordered: yes
-- ask: Average of the last 12 readings at each point yesterday afternoon
SELECT read_at, glucose,
       round(avg(glucose) OVER (PARTITION BY patient_id ORDER BY read_at ROWS BETWEEN 11 PRECEDING AND CURRENT ROW), 1) AS last_12_mean
FROM cgm_readings
WHERE patient_id = 2 AND read_at::DATE = current_date - 1 AND hour(read_at) BETWEEN 12 AND 17
ORDER BY read_at;

-- name: rate_of_change_lag_lead
-- category: windows
-- ordered: yes
-- ask: How fast was Jordan's glucose changing over the last 2 hours?
SELECT read_at, glucose,
       glucose - lag(glucose) OVER w AS change_5min,
       lead(glucose) OVER w - glucose AS next_change,
       round((glucose - lag(glucose, 3) OVER w) / 15.0, 2) AS mg_dl_per_min_15min
FROM cgm_readings
WHERE patient_id = 3 AND read_at >= now() - INTERVAL 2 HOUR
WINDOW w AS (ORDER BY read_at)
ORDER BY read_at;

-- name: daily_peak_with_qualify
-- category: windows
-- ordered: yes
-- ask: When did each day's peak happen this past week?
SELECT patient_id, read_at::DATE AS day, strftime(read_at, '%H:%M') AS peak_time, glucose AS peak
FROM cgm_readings
WHERE read_at >= current_date - 7
QUALIFY row_number() OVER (PARTITION BY patient_id, read_at::DATE ORDER BY glucose DESC, read_at) = 1
ORDER BY patient_id, day;

-- name: lowest_reading_each_person
-- category: windows
-- ordered: yes
-- ask: Each person's lowest reading ever and when it was
SELECT patient_id, read_at, glucose
FROM cgm_readings
QUALIFY rank() OVER (PARTITION BY patient_id ORDER BY glucose, read_at) = 1
ORDER BY patient_id;

-- name: running_bolus_total_per_day
-- category: windows
-- ordered: yes
-- ask: Running total of bolus insulin through yesterday for Alex
SELECT given_at, kind, units,
       sum(units) OVER (PARTITION BY given_at::DATE ORDER BY given_at) AS running_units
FROM boluses
WHERE patient_id = 1 AND given_at::DATE = current_date - 1
ORDER BY given_at;

-- name: percent_rank_of_daily_means
-- category: windows
-- ordered: yes
-- ask: Rank my days from best to worst average
SELECT day, mean_glucose,
       rank() OVER (ORDER BY mean_glucose) AS rank,
       round(percent_rank() OVER (ORDER BY mean_glucose), 3) AS pct_rank,
       ntile(4) OVER (ORDER BY mean_glucose, day) AS quartile
FROM daily_glucose
WHERE patient_id = 1
ORDER BY day;

-- name: dense_rank_weekly_tir
-- category: windows
-- ordered: yes
-- ask: Rank everyone's weeks by time in range
SELECT patient_id, week, tir, dense_rank() OVER (PARTITION BY patient_id ORDER BY tir DESC) AS rank_in_person
FROM (
    SELECT patient_id, date_trunc('week', read_at)::DATE AS week,
           round(100.0 * count(*) FILTER (glucose BETWEEN 70 AND 180) / count(*), 1) AS tir
    FROM cgm_readings
    GROUP BY ALL
)
ORDER BY patient_id, week;

-- name: first_and_last_value_of_day
-- category: windows
-- ordered: yes
-- ask: Morning and bedtime readings for each of the last 5 days
SELECT DISTINCT read_at::DATE AS day,
       first_value(glucose) OVER w AS first_reading,
       last_value(glucose) OVER w AS last_reading
FROM cgm_readings
WHERE patient_id = 1 AND read_at::DATE BETWEEN current_date - 5 AND current_date - 1
WINDOW w AS (PARTITION BY read_at::DATE ORDER BY read_at ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
ORDER BY day;

-- name: rolling_7_day_tir
-- category: windows
-- ordered: yes
-- ask: My 7-day rolling time in range, day by day
SELECT day, pct_in_range,
       round(avg(pct_in_range) OVER (ORDER BY day ROWS BETWEEN 6 PRECEDING AND CURRENT ROW), 1) AS rolling_7_day
FROM daily_glucose
WHERE patient_id = 2
ORDER BY day;

-- name: basal_delivered_per_day
-- category: windows
-- ordered: yes
-- ask: How much basal insulin did the pump deliver each day this week?
SELECT starts_at::DATE AS day,
       round(sum(units_per_hour * date_diff('minute', starts_at, next_start) / 60.0), 2) AS basal_units
FROM (
    SELECT starts_at, units_per_hour,
           lead(starts_at) OVER (PARTITION BY patient_id ORDER BY starts_at) AS next_start
    FROM basal_rates
    WHERE patient_id = 1
)
WHERE next_start IS NOT NULL AND starts_at >= current_date - 7
GROUP BY day
ORDER BY day;

-- name: readings_in_previous_30_minutes
-- category: windows
-- ordered: yes
-- ask: For each low, how many readings in the 30 minutes before were also low?
SELECT read_at, glucose,
       count(*) FILTER (glucose < 70) OVER (ORDER BY read_at RANGE BETWEEN INTERVAL 30 MINUTE PRECEDING AND INTERVAL 5 MINUTE PRECEDING) AS lows_before
FROM cgm_readings
WHERE patient_id = 1
QUALIFY glucose < 60
ORDER BY read_at;

-- name: moving_stddev
-- category: windows
-- ordered: yes
-- ask: Variability (3-hour moving standard deviation) over today
SELECT read_at, glucose,
       round(stddev_samp(glucose) OVER (ORDER BY read_at RANGE BETWEEN INTERVAL 3 HOUR PRECEDING AND CURRENT ROW), 2) AS sd_3h
FROM cgm_readings
WHERE patient_id = 3 AND read_at >= date_trunc('day', now())
ORDER BY read_at
LIMIT 50;

-- name: centered_smoothing
-- category: windows
-- ordered: yes
-- ask: Smooth Sam's last 4 hours with a centred one-hour window
SELECT read_at, glucose,
       round(avg(glucose) OVER (ORDER BY read_at RANGE BETWEEN INTERVAL 30 MINUTE PRECEDING AND INTERVAL 30 MINUTE FOLLOWING), 1) AS smoothed
FROM cgm_readings
WHERE patient_id = 2 AND read_at >= now() - INTERVAL 4 HOUR
ORDER BY read_at;

-- name: last_trend_ignoring_nulls
-- category: windows
-- ordered: yes
-- ask: After a gap the trend arrow is blank; what was the last arrow before it?
SELECT patient_id, read_at, trend,
       lag(trend IGNORE NULLS) OVER (PARTITION BY patient_id ORDER BY read_at) AS last_known_trend
FROM cgm_readings
QUALIFY trend IS NULL
ORDER BY patient_id, read_at
LIMIT 20;

-- name: named_window_cumulative
-- category: windows
-- ordered: yes
-- ask: Carbs and insulin so far today, at each bolus
SELECT patient_id, given_at, carbs_g,
       sum(carbs_g) OVER w AS carbs_so_far,
       sum(units) OVER w AS units_so_far,
       count(*) OVER w AS boluses_so_far
FROM boluses
WHERE given_at >= current_date - 1
WINDOW w AS (PARTITION BY patient_id, given_at::DATE ORDER BY given_at ROWS UNBOUNDED PRECEDING)
ORDER BY patient_id, given_at;

-- name: cume_dist_of_glucose
-- category: windows
-- ordered: yes
-- ask: What share of my readings are at or below each 20 mg/dL mark?
SELECT DISTINCT glucose // 20 * 20 AS bucket,
       round(cume_dist() OVER (ORDER BY glucose // 20 * 20), 4) AS share_at_or_below
FROM cgm_readings
WHERE patient_id = 1
ORDER BY bucket;

-------------------------------------------------------------------------------------------------
-- GROUPING SETS, ROLLUP, CUBE
-------------------------------------------------------------------------------------------------

-- name: grouping_sets_patient_trend
-- category: grouping_sets
-- ordered: yes
-- ask: Readings per trend arrow per person, with per-person and overall totals
SELECT patient_id, trend, count(*) AS readings, grouping(patient_id, trend) AS level
FROM cgm_readings
GROUP BY GROUPING SETS ((patient_id, trend), (patient_id), ())
ORDER BY level, patient_id NULLS LAST, trend NULLS LAST;

-- name: rollup_bolus_units
-- category: grouping_sets
-- ordered: yes
-- ask: Insulin per person and bolus kind, with subtotals and a grand total
SELECT coalesce(patient_id::VARCHAR, 'all') AS patient, coalesce(kind, 'all') AS kind,
       sum(units) AS units, count(*) AS boluses
FROM boluses
GROUP BY ROLLUP (patient_id, kind)
ORDER BY patient_id NULLS LAST, kind NULLS LAST;

-- name: cube_meal_carbs
-- category: grouping_sets
-- ordered: yes
-- ask: Carbs by person and meal, every combination of totals
SELECT patient_id, meal, sum(carbs_g) AS carbs_g, grouping(patient_id) AS all_patients, grouping(meal) AS all_meals
FROM boluses
WHERE kind = 'meal'
GROUP BY CUBE (patient_id, meal)
ORDER BY patient_id NULLS LAST, meal NULLS LAST;

-- name: grouping_labels
-- category: grouping_sets
-- ordered: yes
-- ask: Average by person and by hour band, labelled
SELECT CASE WHEN grouping(patient_id) = 1 THEN 'everyone' ELSE 'patient ' || patient_id END AS who,
       CASE WHEN grouping(band) = 1 THEN 'all day' ELSE band END AS band,
       round(avg(glucose), 1) AS mean_glucose
FROM (SELECT patient_id, glucose, CASE WHEN hour(read_at) < 12 THEN 'am' ELSE 'pm' END AS band FROM cgm_readings)
GROUP BY GROUPING SETS ((patient_id, band), (patient_id), (band), ())
ORDER BY who, band;

-- name: rollup_day_week
-- category: grouping_sets
-- ordered: yes
-- ask: Readings per day of the last two weeks with weekly subtotals
SELECT date_trunc('week', read_at)::DATE AS week, read_at::DATE AS day, count(*) AS readings
FROM cgm_readings
WHERE read_at::DATE BETWEEN current_date - 14 AND current_date - 1
GROUP BY ROLLUP (week, day)
ORDER BY week NULLS LAST, day NULLS LAST;

-- name: grouping_sets_alarm_json
-- category: grouping_sets
-- ordered: yes
-- ask: Alarms by code and by severity
SELECT details->>'code' AS code, details->>'severity' AS severity, count(*) AS alarms
FROM pump_events
WHERE event_type = 'alarm'
GROUP BY GROUPING SETS ((code), (severity))
ORDER BY code NULLS LAST, severity NULLS LAST;

-- name: cube_hour_band_patient_lows
-- category: grouping_sets
-- ordered: yes
-- ask: Lows by person and night/day, with totals
SELECT patient_id, hour(read_at) < 6 AS at_night, count(*) AS lows
FROM cgm_readings
WHERE glucose < 70
GROUP BY CUBE (patient_id, at_night)
ORDER BY patient_id NULLS LAST, at_night NULLS LAST;

-- name: rollup_event_type_month
-- category: grouping_sets
-- ordered: yes
-- ask: Pump events per month and type with monthly totals
SELECT strftime(occurred_at, '%Y-%m') AS month, event_type, count(*) AS events
FROM pump_events
GROUP BY ROLLUP (month, event_type)
ORDER BY month NULLS LAST, event_type NULLS LAST;

-------------------------------------------------------------------------------------------------
-- PIVOT and UNPIVOT
-------------------------------------------------------------------------------------------------

-- name: pivot_trend_counts
-- category: pivot
-- ordered: yes
-- ask: A table of trend arrows (columns) by person (rows)
PIVOT cgm_readings
ON trend IN ('DoubleDown', 'SingleDown', 'FortyFiveDown', 'Flat', 'FortyFiveUp', 'SingleUp', 'DoubleUp')
USING count(*)
GROUP BY patient_id
ORDER BY patient_id;

-- name: pivot_carbs_by_meal
-- category: pivot
-- ordered: yes
-- ask: Total carbs for breakfast, lunch and dinner per person
PIVOT boluses
ON meal IN ('breakfast', 'lunch', 'dinner')
USING sum(carbs_g)
GROUP BY patient_id
ORDER BY patient_id;

-- name: pivot_as_subquery_joined
-- category: pivot
-- ordered: yes
-- ask: Mean glucose by part of day next to each person's name
SELECT p.display_name, round(t.night, 1) AS night, round(t.day, 1) AS day
FROM (
    PIVOT (SELECT patient_id, glucose, CASE WHEN hour(read_at) < 6 THEN 'night' ELSE 'day' END AS part FROM cgm_readings)
    ON part IN ('night', 'day')
    USING avg(glucose)
    GROUP BY patient_id
) AS t
JOIN patients p USING (patient_id)
ORDER BY p.display_name;

-- name: pivot_in_cte
-- category: pivot
-- ordered: yes
-- ask: Which person takes the most correction insulin compared with meal insulin?
WITH by_kind AS (
    PIVOT boluses ON kind IN ('meal', 'correction') USING sum(units) GROUP BY patient_id
)
SELECT patient_id, meal, correction, round(correction / meal * 100, 1) AS correction_pct
FROM by_kind
ORDER BY correction_pct DESC, patient_id;

-- name: pivot_standard_syntax
-- category: pivot
-- ordered: yes
-- ask: Insulin per meal per person (SQL-standard PIVOT)
SELECT *
FROM boluses
PIVOT (sum(units) FOR meal IN ('breakfast', 'lunch', 'dinner') GROUP BY patient_id)
ORDER BY patient_id;

-- name: pivot_two_aggregates
-- category: pivot
-- ordered: yes
-- ask: Count and average of readings per range band, per person
PIVOT (
    SELECT patient_id, glucose,
           CASE WHEN glucose < 70 THEN 'low' WHEN glucose <= 180 THEN 'in_range' ELSE 'high' END AS band
    FROM cgm_readings
)
ON band IN ('low', 'in_range', 'high')
USING count(*) AS n, round(avg(glucose), 1) AS mean
GROUP BY patient_id
ORDER BY patient_id;

-- name: pivot_event_types_per_month
-- category: pivot
-- ordered: yes
-- ask: Event types as columns, one row per month
PIVOT (SELECT strftime(occurred_at, '%Y-%m') AS month, event_type FROM pump_events)
ON event_type IN ('alarm', 'battery', 'bolus_wizard', 'site_change', 'suspend')
USING count(*)
GROUP BY month
ORDER BY month;

-- name: unpivot_metrics
-- category: pivot
-- ordered: yes
-- ask: Show each person's metrics as rows instead of columns
UNPIVOT (
    SELECT patient_id,
           round(avg(glucose), 1)::DOUBLE AS mean_glucose,
           round(stddev_samp(glucose), 1)::DOUBLE AS sd,
           round(3.31 + 0.02392 * avg(glucose), 2)::DOUBLE AS gmi
    FROM cgm_readings
    GROUP BY patient_id
)
ON mean_glucose, sd, gmi
INTO NAME metric VALUE value
ORDER BY patient_id, metric;

-- name: unpivot_columns_star
-- category: pivot
-- ordered: yes
-- ask: Alert thresholds of each pump as name/value rows
UNPIVOT (SELECT device_id, alert_settings.low, alert_settings.high, alert_settings.urgent_low FROM devices WHERE kind = 'pump')
ON COLUMNS(* EXCLUDE (device_id))
INTO NAME threshold VALUE mg_dl
ORDER BY device_id, threshold;

-- name: unpivot_standard_syntax
-- category: pivot
-- ordered: yes
-- ask: Carbs and extended minutes of Alex's last boluses as rows (SQL-standard UNPIVOT)
SELECT bolus_id, field, value
FROM (SELECT bolus_id, carbs_g, extended_minutes FROM boluses WHERE patient_id = 1 AND extended_minutes IS NOT NULL)
UNPIVOT (value FOR field IN (carbs_g, extended_minutes))
ORDER BY bolus_id, field;

-- name: pivot_without_in_list
-- category: pivot
-- ask: Trend arrows as columns, whatever arrows exist
PIVOT cgm_readings ON trend USING count(*) GROUP BY patient_id;

-------------------------------------------------------------------------------------------------
-- FILTER clauses
-------------------------------------------------------------------------------------------------

-- name: filter_without_where
-- category: filter_clause
-- ordered: yes
-- ask: Count lows and very lows per person
SELECT patient_id, count(*) FILTER (glucose < 70) AS lows, count(*) FILTER (glucose < 54) AS very_lows
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: filter_with_where_keyword
-- category: filter_clause
-- ordered: yes
-- ask: Highs and very highs per person (standard FILTER (WHERE ...))
SELECT patient_id,
       count(*) FILTER (WHERE glucose > 180) AS highs,
       count(*) FILTER (WHERE glucose > 250) AS very_highs,
       count(*) AS total
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: filter_overnight_vs_daytime
-- category: filter_clause
-- ordered: yes
-- ask: Overnight average against daytime average
SELECT patient_id,
       round(avg(glucose) FILTER (hour(read_at) < 6), 1) AS overnight_mean,
       round(avg(glucose) FILTER (hour(read_at) >= 6), 1) AS daytime_mean
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: filter_bolus_kinds
-- category: filter_clause
-- ordered: yes
-- ask: Meal against correction insulin per person
SELECT patient_id,
       sum(units) FILTER (kind = 'meal') AS meal_units,
       sum(units) FILTER (kind = 'correction') AS correction_units,
       count(*) FILTER (extended_minutes IS NOT NULL) AS extended_boluses
FROM boluses
GROUP BY patient_id
ORDER BY patient_id;

-- name: filter_weekly_ranges
-- category: filter_clause
-- ordered: yes
-- ask: Weekly share of readings in each range
SELECT date_trunc('week', read_at)::DATE AS week,
       round(100.0 * count(*) FILTER (glucose < 70) / count(*), 2) AS below,
       round(100.0 * count(*) FILTER (glucose BETWEEN 70 AND 180) / count(*), 2) AS in_range,
       round(100.0 * count(*) FILTER (glucose > 180) / count(*), 2) AS above
FROM cgm_readings
GROUP BY week
ORDER BY week;

-- name: filter_list_of_very_lows
-- category: filter_clause
-- ordered: yes
-- ask: The very-low readings of each day this week, in order
SELECT read_at::DATE AS day, patient_id,
       list(glucose ORDER BY read_at) FILTER (glucose < 54) AS very_low_readings
FROM cgm_readings
WHERE read_at >= current_date - 7
GROUP BY ALL
HAVING count(*) FILTER (glucose < 54) > 0
ORDER BY day, patient_id;

-- name: filter_in_having
-- category: filter_clause
-- ordered: yes
-- ask: Days with more than 30 minutes below 70
SELECT patient_id, read_at::DATE AS day, 5 * count(*) FILTER (glucose < 70) AS minutes_low
FROM cgm_readings
GROUP BY ALL
HAVING count(*) FILTER (glucose < 70) > 6
ORDER BY patient_id, day;

-------------------------------------------------------------------------------------------------
-- Sampling, always with a seed
-------------------------------------------------------------------------------------------------

-- name: sample_reservoir_repeatable
-- category: sampling
-- ordered: yes
-- ask: Show me 10 random readings
SELECT reading_id, patient_id, glucose
FROM cgm_readings
USING SAMPLE reservoir(10 ROWS) REPEATABLE (1)
ORDER BY reading_id;

-- name: sample_rows_with_seed
-- category: sampling
-- ordered: yes
-- ask: Another 10 random readings, with the seed in the sample clause
SELECT reading_id, glucose, trend
FROM cgm_readings
USING SAMPLE 10 ROWS (reservoir, 42)
ORDER BY reading_id;

-- name: tablesample_reservoir
-- category: sampling
-- ask: Average of a 200-reading random sample
SELECT count(*) AS sampled, round(avg(glucose), 1) AS sample_mean
FROM cgm_readings TABLESAMPLE reservoir(200 ROWS) REPEATABLE (7);

-- name: sample_bernoulli_percent
-- category: sampling
-- ordered: yes
-- ask: A 1% random sample of readings, per person
SELECT patient_id, count(*) AS sampled
FROM cgm_readings TABLESAMPLE bernoulli(1%) REPEATABLE (42)
GROUP BY patient_id
ORDER BY patient_id;

-- name: sample_system_percent
-- category: sampling
-- ask: Roughly 10% of readings, sampled by block
SELECT count(*) AS sampled, min(glucose) AS lowest, max(glucose) AS highest
FROM cgm_readings
USING SAMPLE 10% (system, 42);

-- name: sample_in_subquery
-- category: sampling
-- ordered: yes
-- ask: Estimate time in range from a sample of 500 readings
SELECT patient_id, count(*) AS sampled, round(100.0 * avg((glucose BETWEEN 70 AND 180)::INTEGER), 1) AS tir_estimate
FROM (SELECT * FROM cgm_readings USING SAMPLE reservoir(500 ROWS) REPEATABLE (3))
GROUP BY patient_id
ORDER BY patient_id;

-- name: sample_of_boluses
-- category: sampling
-- ordered: yes
-- ask: Pick 5 random boluses to review
SELECT bolus_id, patient_id, kind, units, carbs_g
FROM boluses TABLESAMPLE reservoir(5 ROWS) REPEATABLE (9)
ORDER BY bolus_id;

-------------------------------------------------------------------------------------------------
-- Lambdas and lists (both lambda syntaxes)
-------------------------------------------------------------------------------------------------

-- name: lambda_arrow_mmol
-- category: lambdas_lists
-- ordered: yes
-- ask: My last 12 readings in mmol/L
SELECT patient_id,
       list_transform(list(glucose ORDER BY read_at DESC)[1:12], x -> round(x / 18.016, 1)) AS last_12_mmol
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: lambda_keyword_mmol
-- category: lambdas_lists
-- ordered: yes
-- ask: The same with Python-style lambda syntax
SELECT patient_id,
       list_transform(list(glucose ORDER BY read_at DESC)[1:12], lambda x: round(x / 18.016, 1)) AS last_12_mmol
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: list_filter_lows
-- category: lambdas_lists
-- ordered: yes
-- ask: Yesterday's readings under 70, as a list per person
SELECT patient_id, list_filter(list(glucose ORDER BY read_at), g -> g < 70) AS lows
FROM cgm_readings
WHERE read_at::DATE = current_date - 1
GROUP BY patient_id
ORDER BY patient_id;

-- name: list_reduce_sum_both_syntaxes
-- category: lambdas_lists
-- ordered: yes
-- ask: Total carbs per day computed with list_reduce
SELECT patient_id, given_at::DATE AS day,
       list_reduce(list(carbs_g ORDER BY given_at) FILTER (carbs_g IS NOT NULL), (acc, x) -> acc + x) AS carbs_arrow,
       list_reduce(list(carbs_g ORDER BY given_at) FILTER (carbs_g IS NOT NULL), lambda acc, x: acc + x) AS carbs_keyword
FROM boluses
WHERE given_at >= current_date - 3
GROUP BY ALL
ORDER BY patient_id, day;

-- name: list_transform_with_index
-- category: lambdas_lists
-- ordered: yes
-- ask: Number each of today's first readings
SELECT patient_id,
       list_transform(list(glucose ORDER BY read_at)[1:6], (g, i) -> i || ':' || g) AS numbered
FROM cgm_readings
WHERE read_at >= date_trunc('day', now())
GROUP BY patient_id
ORDER BY patient_id;

-- name: list_comprehension
-- category: lambdas_lists
-- ordered: yes
-- ask: Highs of the last two hours, converted to mmol/L
SELECT patient_id,
       [round(g / 18.016, 1) FOR g IN list(glucose ORDER BY read_at) IF g > 140] AS highs_mmol
FROM cgm_readings
WHERE read_at >= now() - INTERVAL 2 HOUR
GROUP BY patient_id
ORDER BY patient_id;

-- name: device_tag_lists
-- category: lambdas_lists
-- ordered: yes
-- ask: Which devices are tagged for the arm, and what are their tags?
SELECT device_id, tags, len(tags) AS n_tags, tags[1] AS first_tag, tags[-1] AS last_tag,
       list_contains(tags, 'arm') AS on_arm, list_has_any(tags, ['overpatch', 'pump']) AS overpatch_or_pump
FROM devices
ORDER BY device_id;

-- name: list_sort_distinct_slice
-- category: lambdas_lists
-- ordered: yes
-- ask: The distinct trend arrows each person had today, sorted
SELECT patient_id,
       list_sort(list_distinct(list(trend))) AS arrows,
       list_sort(list(DISTINCT glucose // 50 * 50)) AS bands
FROM cgm_readings
WHERE read_at >= date_trunc('day', now())
GROUP BY patient_id
ORDER BY patient_id;

-- name: unnest_device_tags
-- category: lambdas_lists
-- ordered: yes
-- ask: How many devices carry each tag?
SELECT tag, count(*) AS devices
FROM (SELECT unnest(tags) AS tag FROM devices)
GROUP BY tag
ORDER BY tag;

-- name: list_reduce_max_and_filter_alias
-- category: lambdas_lists
-- ordered: yes
-- ask: Today's peak, the number of highs and the mean, from lists
SELECT patient_id,
       list_reduce(list(glucose), lambda a, b: greatest(a, b)) AS peak,
       len(filter(list(glucose), x -> x > 180)) AS highs,
       round(list_aggregate(list(glucose), 'avg'), 1) AS mean_glucose
FROM cgm_readings
WHERE read_at >= date_trunc('day', now())
GROUP BY patient_id
ORDER BY patient_id;

-- name: list_zip_readings_and_trends
-- category: lambdas_lists
-- ordered: yes
-- ask: Pair each of the last 4 readings with its arrow
SELECT patient_id,
       list_transform(list_zip(list(glucose ORDER BY read_at DESC)[1:4], list(trend ORDER BY read_at DESC)[1:4]),
                      p -> {'glucose': p[1], 'trend': p[2]}) AS pairs
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: flatten_and_concat_lists
-- category: lambdas_lists
-- ordered: yes
-- ask: All calibration values across sensors, and tags plus kind, per person
SELECT patient_id,
       flatten(list(calibrations ORDER BY device_id)) AS all_calibrations,
       list_concat(['person ' || patient_id], list(DISTINCT kind ORDER BY kind)) AS labels
FROM devices
GROUP BY patient_id
ORDER BY patient_id;

-- name: string_split_and_transform
-- category: lambdas_lists
-- ordered: yes
-- ask: Split the sensor ids into their parts
SELECT device_id, string_split(device_id, '-') AS parts,
       list_transform(string_split(device_id, '-')[2:], p -> p::INTEGER) AS numbers
FROM devices
WHERE kind = 'cgm'
ORDER BY device_id;

-- name: hourly_profile_as_list
-- category: lambdas_lists
-- ordered: yes
-- ask: A 24-value hourly profile per person
SELECT patient_id, list(mean ORDER BY hour) AS hourly_means
FROM (
    SELECT patient_id, hour(read_at) AS hour, round(avg(glucose))::INTEGER AS mean
    FROM cgm_readings
    GROUP BY ALL
)
GROUP BY patient_id
ORDER BY patient_id;

-- name: list_position_and_range
-- category: lambdas_lists
-- ordered: yes
-- ask: At which hour is each person's profile highest?
SELECT patient_id,
       list_position(hourly, list_max(hourly)) - 1 AS peak_hour,
       list_max(hourly) AS peak_mean,
       list_transform(range(0, 24, 6), h -> hourly[h + 1]) AS every_6_hours
FROM (
    SELECT patient_id, list(mean ORDER BY hour) AS hourly
    FROM (SELECT patient_id, hour(read_at) AS hour, round(avg(glucose))::INTEGER AS mean FROM cgm_readings GROUP BY ALL)
    GROUP BY patient_id
)
ORDER BY patient_id;

-- name: list_any_all_values
-- category: lambdas_lists
-- ordered: yes
-- ask: Was every reading in range today, and was any below 70?
SELECT patient_id,
       list_bool_and(list_transform(list(glucose), g -> g BETWEEN 70 AND 180)) AS all_in_range,
       list_bool_or(list_transform(list(glucose), lambda g: g < 70)) AS any_low
FROM cgm_readings
WHERE read_at >= date_trunc('day', now())
GROUP BY patient_id
ORDER BY patient_id;

-------------------------------------------------------------------------------------------------
-- STRUCTs and MAPs
-------------------------------------------------------------------------------------------------

-- name: struct_field_access
-- category: structs_maps
-- ordered: yes
-- ask: Alert thresholds per device
SELECT device_id, alert_settings.low AS low_alert, alert_settings['high'] AS high_alert,
       struct_extract(alert_settings, 'urgent_low') AS urgent_low, alert_settings.rise_alert
FROM devices
ORDER BY device_id;

-- name: whole_struct_column
-- category: structs_maps
-- ordered: yes
-- ask: Show the pumps' alert settings
SELECT device_id, alert_settings
FROM devices
WHERE kind = 'pump'
ORDER BY device_id;

-- name: struct_star_expansion
-- category: structs_maps
-- ordered: yes
-- ask: The alert settings of the current sensors as columns
SELECT device_id, alert_settings.*
FROM devices
WHERE kind = 'cgm' AND expires_at > now()
ORDER BY device_id;

-- name: unnest_struct
-- category: structs_maps
-- ordered: yes
-- ask: Unpack the alert settings into columns
SELECT device_id, unnest(alert_settings)
FROM devices
WHERE patient_id = 2
ORDER BY device_id;

-- name: build_struct_per_patient
-- category: structs_maps
-- ordered: yes
-- ask: One record per person with mean, SD and extremes
SELECT patient_id,
       {'mean': round(avg(glucose), 1), 'sd': round(stddev_samp(glucose), 1), 'min': min(glucose), 'max': max(glucose)} AS stats,
       struct_pack(first := min(read_at)::DATE, last := max(read_at)::DATE) AS covered
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: map_lookup
-- category: structs_maps
-- ordered: yes
-- ask: Pump limits: maximum bolus and basal
SELECT device_id, limits['max_bolus'] AS max_bolus, element_at(limits, 'max_basal') AS max_basal,
       map_contains(limits, 'insulin_duration_h') AS has_duration
FROM devices
WHERE kind = 'pump'
ORDER BY device_id;

-- name: whole_map_column
-- category: structs_maps
-- ordered: yes
-- ask: Show the settings maps of the pumps
SELECT device_id, limits
FROM devices
WHERE kind = 'pump'
ORDER BY device_id;

-- name: map_keys_values_entries
-- category: structs_maps
-- ordered: yes
-- ask: Which settings does each of Jordan's devices have?
SELECT device_id, map_keys(limits) AS keys, map_values(limits) AS values, map_entries(limits) AS entries,
       cardinality(limits) AS n
FROM devices
WHERE patient_id = 3
ORDER BY device_id;

-- name: map_from_lists
-- category: structs_maps
-- ordered: yes
-- ask: A map from meal to carbs for each person's last day
SELECT patient_id, map(list(meal ORDER BY given_at), list(carbs_g ORDER BY given_at)) AS carbs_by_meal
FROM boluses
WHERE kind = 'meal' AND given_at::DATE = current_date - 1
GROUP BY patient_id
ORDER BY patient_id;

-- name: map_literal_and_histogram
-- category: structs_maps
-- ordered: yes
-- ask: Histogram of readings in 50 mg/dL bins per person
SELECT patient_id, histogram(glucose // 50 * 50) AS bins, MAP {'target_low': 70, 'target_high': 180} AS targets
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: map_from_entries_struct_list
-- category: structs_maps
-- ordered: yes
-- ask: Count of each event type per person, as a map
SELECT patient_id, map_from_entries(list({'k': event_type, 'v': n} ORDER BY event_type)) AS events
FROM (SELECT patient_id, event_type, count(*) AS n FROM pump_events GROUP BY ALL)
GROUP BY patient_id
ORDER BY patient_id;

-- name: list_of_structs
-- category: structs_maps
-- ordered: yes
-- ask: Today's boluses per person as a list of records
SELECT patient_id, list({'at': strftime(given_at, '%H:%M'), 'units': units, 'carbs': carbs_g} ORDER BY given_at) AS boluses
FROM boluses
WHERE given_at::DATE = current_date - 1
GROUP BY patient_id
ORDER BY patient_id;

-------------------------------------------------------------------------------------------------
-- DESCRIBE, SUMMARIZE, SHOW
-------------------------------------------------------------------------------------------------

-- name: describe_readings
-- category: describe_summarize
-- ask: What columns does the readings table have?
DESCRIBE cgm_readings;

-- name: describe_devices_nested_types
-- category: describe_summarize
-- ask: Describe the devices table
DESCRIBE devices;

-- name: show_pump_events
-- category: describe_summarize
-- ask: Show me the pump events table's columns
SHOW pump_events;

-- name: describe_query
-- category: describe_summarize
-- ask: What would this query return?
DESCRIBE SELECT patient_id, read_at::DATE AS day, avg(glucose) AS mean, list(trend) AS trends
FROM cgm_readings
GROUP BY ALL;

-- name: describe_view
-- category: describe_summarize
-- ask: What is in the daily_glucose view?
DESCRIBE daily_glucose;

-- name: summarize_patients
-- category: describe_summarize
-- ask: Summarize the patients table
SUMMARIZE patients;

-- name: summarize_boluses
-- category: describe_summarize
-- ask: Give me a statistical summary of my boluses
SUMMARIZE boluses;

-- name: summarize_query
-- category: describe_summarize
-- ask: Summary statistics of Alex's glucose and trend
SUMMARIZE SELECT glucose, trend FROM cgm_readings WHERE patient_id = 1;

-- name: summarize_readings_as_table
-- category: describe_summarize
-- ordered: yes
-- ask: Min, max and share of NULLs of each readings column
SELECT column_name, column_type, min, max, null_percentage
FROM (SUMMARIZE cgm_readings)
ORDER BY column_name;

-- name: from_summarize_first
-- category: describe_summarize
-- ask: Which boluses columns have missing values?
FROM (SUMMARIZE boluses)
SELECT column_name, count, null_percentage
WHERE null_percentage > 0;

-- name: filter_describe_output
-- category: describe_summarize
-- ordered: yes
-- ask: Which columns of boluses are decimals or timestamps?
SELECT column_name, column_type
FROM (DESCRIBE boluses)
WHERE column_type LIKE 'DECIMAL%' OR column_type LIKE 'TIMESTAMP%'
ORDER BY column_name;

-- name: show_tables
-- category: describe_summarize
-- ask: Which tables are there?
SHOW TABLES;

-------------------------------------------------------------------------------------------------
-- DuckDB's friendlier SQL
-------------------------------------------------------------------------------------------------

-- name: three_part_name
-- category: duckdb_syntax
-- ask: Count readings, naming the table with database and schema
SELECT count(*) AS readings
FROM health.main.cgm_readings;

-- name: three_part_names_join
-- category: duckdb_syntax
-- ordered: yes
-- ask: Readings per person by name, with fully qualified tables
SELECT p.display_name, count(*) AS readings
FROM health.main.cgm_readings AS r
JOIN health.main.patients AS p ON p.patient_id = r.patient_id
GROUP BY p.display_name
ORDER BY p.display_name;

-- name: three_part_column_reference
-- category: duckdb_syntax
-- ordered: yes
-- ask: Patients' names via a fully qualified column reference
SELECT health.main.patients.display_name, health.main.patients.diabetes_type
FROM health.main.patients
ORDER BY health.main.patients.patient_id;

-- name: prefix_aliases
-- category: duckdb_syntax
-- ordered: yes
-- ask: Readings and average per person, with prefix aliases
SELECT patient: patient_id, readings: count(*), mean: round(avg(glucose), 1)
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient;

-- name: prefix_alias_constant
-- category: duckdb_syntax
-- ask: A constant with a prefix alias
SELECT x: 42, label: 'target', low: 70, high: 180;

-- name: star_rename
-- category: duckdb_syntax
-- ordered: yes
-- ask: The latest 5 readings with glucose named mg_dl
SELECT * RENAME (glucose AS mg_dl, read_at AS time)
FROM cgm_readings
WHERE patient_id = 2
ORDER BY time DESC
LIMIT 5;

-- name: star_exclude
-- category: duckdb_syntax
-- ordered: yes
-- ask: Show boluses without the id columns
SELECT * EXCLUDE (bolus_id, patient_id)
FROM boluses
WHERE patient_id = 3
ORDER BY given_at
LIMIT 5;

-- name: star_replace
-- category: duckdb_syntax
-- ordered: yes
-- ask: Readings in mmol/L, every other column unchanged
SELECT * REPLACE (round(glucose / 18.016, 1) AS glucose)
FROM cgm_readings
WHERE patient_id = 1
ORDER BY read_at
LIMIT 5;

-- name: columns_regex
-- category: duckdb_syntax
-- ordered: yes
-- ask: Only the glucose and trend columns
SELECT COLUMNS('^(glucose|trend)$')
FROM cgm_readings
ORDER BY reading_id
LIMIT 5;

-- name: columns_regex_aggregate
-- category: duckdb_syntax
-- ask: The largest value of every id column
SELECT max(COLUMNS('.*_id$'))
FROM boluses;

-- name: columns_lambda
-- category: duckdb_syntax
-- ask: Earliest of every timestamp column in devices
SELECT min(COLUMNS(c -> c LIKE '%_at'))
FROM devices;

-- name: columns_star_exclude_aggregate
-- category: duckdb_syntax
-- ask: Count non-NULL values of each boluses column
SELECT count(COLUMNS(* EXCLUDE (bolus_id)))
FROM boluses;

-- name: order_by_position_hash
-- category: duckdb_syntax
-- ordered: yes
-- ask: The three highest readings, sorted by position
SELECT patient_id, glucose, read_at
FROM cgm_readings
ORDER BY #2 DESC, #3, #1
LIMIT 3;

-- name: select_by_position_hash
-- category: duckdb_syntax
-- ordered: yes
-- ask: First two columns of the patients table
SELECT #1, #2
FROM patients
ORDER BY #1;

-- name: from_first
-- category: duckdb_syntax
-- ordered: yes
-- ask: Readings per device, FROM first
FROM cgm_readings
SELECT device_id, count(*) AS readings
GROUP BY device_id
ORDER BY device_id;

-- name: from_only
-- category: duckdb_syntax
-- ask: Show the patients table
FROM patients;

-- name: from_first_where_limit
-- category: duckdb_syntax
-- ordered: yes
-- ask: Jordan's lowest five readings
FROM cgm_readings
SELECT read_at, glucose
WHERE patient_id = 3
ORDER BY glucose, read_at
LIMIT 5;

-- name: group_by_all_order_by_all
-- category: duckdb_syntax
-- ordered: yes
-- ask: Readings per person and trend
SELECT patient_id, trend, count(*) AS readings
FROM cgm_readings
GROUP BY ALL
ORDER BY ALL;

-- name: order_by_all_desc
-- category: duckdb_syntax
-- ordered: yes
-- ask: Boluses per kind and meal, largest group first
SELECT count(*) AS boluses, kind, coalesce(meal, '-') AS meal
FROM boluses
GROUP BY ALL
ORDER BY ALL DESC;

-- name: distinct_on
-- category: duckdb_syntax
-- ordered: yes
-- ask: Each person's most recent bolus
SELECT DISTINCT ON (patient_id) patient_id, given_at, kind, units
FROM boluses
ORDER BY patient_id, given_at DESC;

-- name: limit_offset
-- category: duckdb_syntax
-- ordered: yes
-- ask: Second page of journal entries
SELECT entry_id, noted_at::DATE AS day, note
FROM journal
ORDER BY entry_id
LIMIT 10 OFFSET 10;

-- name: union_by_name
-- category: duckdb_syntax
-- ordered: yes
-- ask: One timeline of Alex's boluses yesterday and alarms of the last 3 days
SELECT given_at AS happened_at, 'bolus' AS what, units::VARCHAR AS detail FROM boluses
WHERE patient_id = 1 AND given_at::DATE = current_date - 1
UNION ALL BY NAME
SELECT 'alarm' AS what, occurred_at AS happened_at, details->>'code' AS detail FROM pump_events
WHERE patient_id = 1 AND event_type = 'alarm' AND occurred_at::DATE >= current_date - 3
ORDER BY happened_at, what;

-- name: alias_used_in_where
-- category: duckdb_syntax
-- ordered: yes
-- ask: Readings under 3.0 mmol/L
SELECT patient_id, read_at, round(glucose / 18.016, 2) AS mmol
FROM cgm_readings
WHERE mmol < 2.6
ORDER BY patient_id, read_at;

-- name: trailing_comma_in_select
-- category: duckdb_syntax
-- ordered: yes
-- ask: Readings per person (the agent left a trailing comma)
SELECT patient_id, count(*) AS readings,
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: string_slicing
-- category: duckdb_syntax
-- ordered: yes
-- ask: The first 12 characters of each of Jordan's notes
SELECT entry_id, note[1:12] AS preview
FROM journal
WHERE patient_id = 3
ORDER BY entry_id;

-- name: count_without_star
-- category: duckdb_syntax
-- ordered: yes
-- ask: Number of boluses and distinct meals per person
SELECT patient_id, count() AS boluses, count(DISTINCT meal) AS meals
FROM boluses
GROUP BY patient_id
ORDER BY patient_id;

-- name: ilike_and_glob
-- category: duckdb_syntax
-- ordered: yes
-- ask: Pumps whose model starts with t, and devices whose id looks like a G7 sensor of person 2
SELECT device_id, model, model ILIKE 't:%' AS is_tandem, device_id GLOB 'G7-2-*' AS sam_sensor
FROM devices
WHERE model ILIKE 'T%' OR device_id GLOB 'G7-2-*'
ORDER BY device_id;

-- name: is_distinct_from
-- category: duckdb_syntax
-- ordered: yes
-- ask: Readings whose arrow differs from the previous reading's (NULLs included)
SELECT patient_id, count(*) AS arrow_changes
FROM (
    SELECT patient_id, trend, lag(trend) OVER (PARTITION BY patient_id ORDER BY read_at) AS previous_trend
    FROM cgm_readings
)
WHERE trend IS DISTINCT FROM previous_trend
GROUP BY patient_id
ORDER BY patient_id;

-- name: values_list
-- category: duckdb_syntax
-- ordered: yes
-- ask: The consensus ranges as a small table
SELECT *
FROM (VALUES ('very low', 0, 53), ('low', 54, 69), ('in range', 70, 180), ('high', 181, 250), ('very high', 251, 999)) AS ranges(name, low, high)
ORDER BY low;

-- name: range_join_to_values
-- category: duckdb_syntax
-- ordered: yes
-- ask: Readings per consensus range, by joining to a ranges table
SELECT ranges.name, count(*) AS readings
FROM cgm_readings r
JOIN (VALUES ('very low', 0, 53), ('low', 54, 69), ('in range', 70, 180), ('high', 181, 250), ('very high', 251, 999)) AS ranges(name, low, high)
  ON r.glucose BETWEEN ranges.low AND ranges.high
GROUP BY ranges.name, ranges.low
ORDER BY ranges.low;

-- name: qualify_with_window_alias
-- category: duckdb_syntax
-- ordered: yes
-- ask: The top 3 readings of each person, using QUALIFY on an alias
SELECT patient_id, read_at, glucose, row_number() OVER (PARTITION BY patient_id ORDER BY glucose DESC, read_at) AS n
FROM cgm_readings
QUALIFY n <= 3
ORDER BY patient_id, n;

-- name: implicit_casts_and_literals
-- category: duckdb_syntax
-- ask: Dates and numbers written as strings
SELECT '2026-01-15'::DATE + 30 AS plus_30_days, '180'::INTEGER / 18.016 AS mmol, DATE '2026-03-01' - DATE '2026-02-01' AS days_in_feb;

-- name: lateral_join_latest_three
-- category: duckdb_syntax
-- ordered: yes
-- ask: Each person's three latest readings
SELECT p.display_name, l.read_at, l.glucose
FROM patients p,
LATERAL (SELECT read_at, glucose FROM cgm_readings r WHERE r.patient_id = p.patient_id ORDER BY read_at DESC LIMIT 3) AS l
ORDER BY p.display_name, l.read_at DESC;

-------------------------------------------------------------------------------------------------
-- Long expressions, as generated SQL sometimes is
-------------------------------------------------------------------------------------------------

-- name: sixty_term_sum_of_lags
-- category: long_expressions
-- ordered: yes
-- ask: The 5-hour mean before each reading, written out term by term
SELECT read_at, glucose,
       round((lag(glucose, 1) OVER w + lag(glucose, 2) OVER w + lag(glucose, 3) OVER w + lag(glucose, 4) OVER w + lag(glucose, 5) OVER w + lag(glucose, 6) OVER w + lag(glucose, 7) OVER w + lag(glucose, 8) OVER w + lag(glucose, 9) OVER w + lag(glucose, 10) OVER w + lag(glucose, 11) OVER w + lag(glucose, 12) OVER w + lag(glucose, 13) OVER w + lag(glucose, 14) OVER w + lag(glucose, 15) OVER w + lag(glucose, 16) OVER w + lag(glucose, 17) OVER w + lag(glucose, 18) OVER w + lag(glucose, 19) OVER w + lag(glucose, 20) OVER w + lag(glucose, 21) OVER w + lag(glucose, 22) OVER w + lag(glucose, 23) OVER w + lag(glucose, 24) OVER w + lag(glucose, 25) OVER w + lag(glucose, 26) OVER w + lag(glucose, 27) OVER w + lag(glucose, 28) OVER w + lag(glucose, 29) OVER w + lag(glucose, 30) OVER w + lag(glucose, 31) OVER w + lag(glucose, 32) OVER w + lag(glucose, 33) OVER w + lag(glucose, 34) OVER w + lag(glucose, 35) OVER w + lag(glucose, 36) OVER w + lag(glucose, 37) OVER w + lag(glucose, 38) OVER w + lag(glucose, 39) OVER w + lag(glucose, 40) OVER w + lag(glucose, 41) OVER w + lag(glucose, 42) OVER w + lag(glucose, 43) OVER w + lag(glucose, 44) OVER w + lag(glucose, 45) OVER w + lag(glucose, 46) OVER w + lag(glucose, 47) OVER w + lag(glucose, 48) OVER w + lag(glucose, 49) OVER w + lag(glucose, 50) OVER w + lag(glucose, 51) OVER w + lag(glucose, 52) OVER w + lag(glucose, 53) OVER w + lag(glucose, 54) OVER w + lag(glucose, 55) OVER w + lag(glucose, 56) OVER w + lag(glucose, 57) OVER w + lag(glucose, 58) OVER w + lag(glucose, 59) OVER w + lag(glucose, 60) OVER w) / 60.0, 1) AS mean_previous_5h
FROM cgm_readings
WHERE patient_id = 1
WINDOW w AS (ORDER BY read_at)
QUALIFY read_at >= now() - INTERVAL 2 HOUR
ORDER BY read_at;

-- name: hundred_term_or_chain
-- category: long_expressions
-- ordered: yes
-- ask: Readings with any value from 40 to 139, spelled out one by one
SELECT patient_id, count(*) AS readings
FROM cgm_readings
WHERE glucose = 40 OR glucose = 41 OR glucose = 42 OR glucose = 43 OR glucose = 44 OR glucose = 45 OR glucose = 46 OR glucose = 47 OR glucose = 48 OR glucose = 49 OR glucose = 50 OR glucose = 51 OR glucose = 52 OR glucose = 53 OR glucose = 54 OR glucose = 55 OR glucose = 56 OR glucose = 57 OR glucose = 58 OR glucose = 59 OR glucose = 60 OR glucose = 61 OR glucose = 62 OR glucose = 63 OR glucose = 64 OR glucose = 65 OR glucose = 66 OR glucose = 67 OR glucose = 68 OR glucose = 69 OR glucose = 70 OR glucose = 71 OR glucose = 72 OR glucose = 73 OR glucose = 74 OR glucose = 75 OR glucose = 76 OR glucose = 77 OR glucose = 78 OR glucose = 79 OR glucose = 80 OR glucose = 81 OR glucose = 82 OR glucose = 83 OR glucose = 84 OR glucose = 85 OR glucose = 86 OR glucose = 87 OR glucose = 88 OR glucose = 89 OR glucose = 90 OR glucose = 91 OR glucose = 92 OR glucose = 93 OR glucose = 94 OR glucose = 95 OR glucose = 96 OR glucose = 97 OR glucose = 98 OR glucose = 99 OR glucose = 100 OR glucose = 101 OR glucose = 102 OR glucose = 103 OR glucose = 104 OR glucose = 105 OR glucose = 106 OR glucose = 107 OR glucose = 108 OR glucose = 109 OR glucose = 110 OR glucose = 111 OR glucose = 112 OR glucose = 113 OR glucose = 114 OR glucose = 115 OR glucose = 116 OR glucose = 117 OR glucose = 118 OR glucose = 119 OR glucose = 120 OR glucose = 121 OR glucose = 122 OR glucose = 123 OR glucose = 124 OR glucose = 125 OR glucose = 126 OR glucose = 127 OR glucose = 128 OR glucose = 129 OR glucose = 130 OR glucose = 131 OR glucose = 132 OR glucose = 133 OR glucose = 134 OR glucose = 135 OR glucose = 136 OR glucose = 137 OR glucose = 138 OR glucose = 139
GROUP BY patient_id
ORDER BY patient_id;

-- name: thirty_branch_case
-- category: long_expressions
-- ordered: yes
-- ask: Readings in 10 mg/dL bins, labelled
SELECT CASE WHEN glucose < 40 THEN 'under 40' WHEN glucose < 50 THEN '40-49' WHEN glucose < 60 THEN '50-59' WHEN glucose < 70 THEN '60-69' WHEN glucose < 80 THEN '70-79' WHEN glucose < 90 THEN '80-89' WHEN glucose < 100 THEN '90-99' WHEN glucose < 110 THEN '100-109' WHEN glucose < 120 THEN '110-119' WHEN glucose < 130 THEN '120-129' WHEN glucose < 140 THEN '130-139' WHEN glucose < 150 THEN '140-149' WHEN glucose < 160 THEN '150-159' WHEN glucose < 170 THEN '160-169' WHEN glucose < 180 THEN '170-179' WHEN glucose < 190 THEN '180-189' WHEN glucose < 200 THEN '190-199' WHEN glucose < 210 THEN '200-209' WHEN glucose < 220 THEN '210-219' WHEN glucose < 230 THEN '220-229' WHEN glucose < 240 THEN '230-239' WHEN glucose < 250 THEN '240-249' WHEN glucose < 260 THEN '250-259' WHEN glucose < 270 THEN '260-269' WHEN glucose < 280 THEN '270-279' WHEN glucose < 290 THEN '280-289' WHEN glucose < 300 THEN '290-299' WHEN glucose < 310 THEN '300-309' WHEN glucose < 320 THEN '310-319' WHEN glucose < 330 THEN '320-329' ELSE '330+' END AS bin,
       min(glucose) AS bin_floor, count(*) AS readings
FROM cgm_readings
GROUP BY 1
ORDER BY bin_floor;

-- name: long_in_list
-- category: long_expressions
-- ordered: yes
-- ask: Check a long list of reading ids the agent collected earlier
SELECT patient_id, count(*) AS found, min(reading_id) AS first_id, max(reading_id) AS last_id
FROM cgm_readings
WHERE reading_id IN (1, 151, 301, 451, 601, 751, 901, 1051, 1201, 1351, 1501, 1651, 1801, 1951, 2101, 2251, 2401, 2551, 2701, 2851, 3001, 3151, 3301, 3451, 3601, 3751, 3901, 4051, 4201, 4351, 4501, 4651, 4801, 4951, 5101, 5251, 5401, 5551, 5701, 5851, 6001, 6151, 6301, 6451, 6601, 6751, 6901, 7051, 7201, 7351, 7501, 7651, 7801, 7951, 8101, 8251, 8401, 8551, 8701, 8851, 9001, 9151, 9301, 9451, 9601, 9751, 9901, 10051, 10201, 10351, 10501, 10651, 10801, 10951, 11101, 11251, 11401, 11551, 11701, 11851, 12001, 12151, 12301, 12451, 12601, 12751, 12901, 13051, 13201, 13351, 13501, 13651, 13801, 13951, 14101, 14251, 14401, 14551, 14701, 14851, 15001, 15151, 15301, 15451, 15601, 15751, 15901, 16051, 16201, 16351, 16501, 16651, 16801, 16951, 17101, 17251, 17401, 17551, 17701, 17851, 18001, 18151, 18301, 18451, 18601, 18751, 18901, 19051, 19201, 19351, 19501, 19651, 19801, 19951, 20101, 20251, 20401, 20551, 20701, 20851, 21001, 21151, 21301, 21451, 21601, 21751, 21901, 22051, 22201, 22351, 22501, 22651, 22801, 22951, 23101, 23251, 23401, 23551, 23701, 23851, 24001, 24151, 24301, 24451, 24601, 24751, 24901, 25051, 25201, 25351, 25501, 25651, 25801, 25951, 26101, 26251, 26401, 26551, 26701, 26851, 27001, 27151, 27301, 27451, 27601, 27751, 27901, 28051, 28201, 28351, 28501, 28651, 28801, 28951, 29101, 29251, 29401, 29551, 29701)
GROUP BY patient_id
ORDER BY patient_id;

-------------------------------------------------------------------------------------------------
-- CTEs, including recursive ones
-------------------------------------------------------------------------------------------------

-- name: recursive_date_series_missing_days
-- category: ctes
-- ordered: yes
-- ask: Which of the last 30 days have no data for Jordan?
WITH RECURSIVE days(day) AS (
    SELECT current_date - 30
    UNION ALL
    SELECT day + 1 FROM days WHERE day < current_date - 1
),
counts AS (
    SELECT read_at::DATE AS day, count(*) AS readings
    FROM cgm_readings
    WHERE patient_id = 3
    GROUP BY 1
)
SELECT d.day, coalesce(c.readings, 0) AS readings
FROM days d
LEFT JOIN counts c USING (day)
WHERE coalesce(c.readings, 0) < 250
ORDER BY d.day;

-- name: recursive_hour_series
-- category: ctes
-- ordered: yes
-- ask: Readings in every hour of yesterday, including hours without any
WITH RECURSIVE hours(h) AS (
    SELECT 0
    UNION ALL
    SELECT h + 1 FROM hours WHERE h < 23
)
SELECT h AS hour, count(r.glucose) AS readings
FROM hours
LEFT JOIN cgm_readings r
  ON hour(r.read_at) = h AND r.read_at::DATE = current_date - 1 AND r.patient_id = 1
GROUP BY h
ORDER BY h;

-- name: recursive_insulin_on_board
-- category: ctes
-- ordered: yes
-- ask: How much of a 5-unit bolus is still active each half hour (30% decays per half hour)?
WITH RECURSIVE iob(minutes, units) AS (
    SELECT 0, 5.0::DOUBLE
    UNION ALL
    SELECT minutes + 30, units * 0.7 FROM iob WHERE minutes < 240
)
SELECT minutes, round(units, 3) AS units_on_board
FROM iob
ORDER BY minutes;

-- name: chained_ctes
-- category: ctes
-- ordered: yes
-- ask: Days where the daily mean was above the person's overall mean by 10+
WITH daily AS (
    SELECT patient_id, read_at::DATE AS day, avg(glucose) AS mean
    FROM cgm_readings
    GROUP BY ALL
),
overall AS (
    SELECT patient_id, avg(mean) AS overall_mean
    FROM daily
    GROUP BY patient_id
),
flagged AS (
    SELECT d.*, o.overall_mean
    FROM daily d JOIN overall o USING (patient_id)
    WHERE d.mean > o.overall_mean + 10
)
SELECT patient_id, day, round(mean, 1) AS mean, round(overall_mean, 1) AS overall_mean
FROM flagged
ORDER BY patient_id, day;

-- name: materialized_cte_self_join
-- category: ctes
-- ordered: yes
-- ask: Compare each day with the same weekday one week earlier
WITH daily AS MATERIALIZED (
    SELECT read_at::DATE AS day, round(avg(glucose), 1) AS mean
    FROM cgm_readings
    WHERE patient_id = 2
    GROUP BY 1
)
SELECT this.day, this.mean, last.mean AS week_before, round(this.mean - last.mean, 1) AS change
FROM daily this
JOIN daily last ON last.day = this.day - 7
ORDER BY this.day;

-- name: generate_series_days
-- category: ctes
-- ordered: yes
-- ask: A calendar of the last 7 days with readings per day
SELECT s.day::DATE AS day, count(r.reading_id) AS readings
FROM generate_series(current_date - 7, current_date - 1, INTERVAL 1 DAY) AS s(day)
LEFT JOIN cgm_readings r ON r.read_at::DATE = s.day::DATE
GROUP BY 1
ORDER BY 1;

-- name: range_of_timestamps_buckets
-- category: ctes
-- ordered: yes
-- ask: Readings in each 15-minute slot of the last two hours, empty slots included
WITH slots AS (
    SELECT unnest(range(date_trunc('hour', now()) - INTERVAL 2 HOUR, date_trunc('hour', now()), INTERVAL 15 MINUTE)) AS slot
)
SELECT slot, count(r.glucose) AS readings
FROM slots
LEFT JOIN cgm_readings r
  ON r.read_at >= slot AND r.read_at < slot + INTERVAL 15 MINUTE AND r.patient_id = 1
GROUP BY slot
ORDER BY slot;

-- name: recursive_sensor_chain
-- category: ctes
-- ordered: yes
-- ask: Follow Sam's sensors from the first one, each to the next
WITH RECURSIVE sensors AS (
    SELECT device_id, started_at, 1 AS n
    FROM devices
    WHERE patient_id = 2 AND kind = 'cgm'
    QUALIFY row_number() OVER (ORDER BY started_at) = 1
    UNION ALL
    SELECT d.device_id, d.started_at, s.n + 1
    FROM sensors s
    JOIN devices d ON d.patient_id = 2 AND d.kind = 'cgm' AND d.started_at > s.started_at
                  AND d.started_at < s.started_at + INTERVAL 11 DAY
)
SELECT n, device_id, started_at
FROM sensors
ORDER BY n;

-------------------------------------------------------------------------------------------------
-- Strings and regular expressions
-------------------------------------------------------------------------------------------------

-- name: notes_mentioning_hypo
-- category: strings_regex
-- ordered: yes
-- ask: Journal entries that mention a hypo
SELECT patient_id, noted_at::DATE AS day, note
FROM journal
WHERE note ILIKE '%hypo%'
ORDER BY patient_id, noted_at;

-- name: regexp_extract_carbs
-- category: strings_regex
-- ordered: yes
-- ask: Grams of carbs mentioned in the journal
SELECT entry_id, note, regexp_extract(note, '(\d+)\s*g carbs', 1)::INTEGER AS grams
FROM journal
WHERE regexp_matches(note, '\d+\s*g carbs')
ORDER BY entry_id;

-- name: hashtags
-- category: strings_regex
-- ordered: yes
-- ask: Which hashtags do we use in the journal?
SELECT tag, count(*) AS uses
FROM (SELECT unnest(regexp_extract_all(note, '#(\w+)', 1)) AS tag FROM journal)
GROUP BY tag
ORDER BY tag;

-- name: regexp_replace_numbers
-- category: strings_regex
-- ordered: yes
-- ask: Notes with the numbers masked
SELECT DISTINCT regexp_replace(note, '[0-9]+(\.[0-9]+)?', '#', 'g') AS masked
FROM journal
ORDER BY masked;

-- name: split_part_device_ids
-- category: strings_regex
-- ordered: yes
-- ask: Sensor numbers per person, from the device id
SELECT split_part(device_id, '-', 2)::INTEGER AS patient, list(split_part(device_id, '-', 3) ORDER BY device_id) AS sensors
FROM devices
WHERE starts_with(device_id, 'G7-')
GROUP BY 1
ORDER BY 1;

-- name: string_formatting
-- category: strings_regex
-- ordered: yes
-- ask: A one-line summary per person
SELECT format('{}: {} readings, mean {} mg/dL', p.display_name, count(*), round(avg(r.glucose))) AS summary,
       printf('%s has %.1f%% in range', p.display_name, 100.0 * avg((r.glucose BETWEEN 70 AND 180)::INTEGER)) AS tir_text,
       concat_ws(' | ', p.diabetes_type, p.home_time_zone) AS profile
FROM cgm_readings r
JOIN patients p USING (patient_id)
GROUP BY p.display_name, p.diabetes_type, p.home_time_zone
ORDER BY p.display_name;

-- name: string_measures
-- category: strings_regex
-- ordered: yes
-- ask: Length and shape of each distinct journal note
SELECT DISTINCT note, length(note) AS chars, left(note, 5) AS starts, right(note, 5) AS ends,
       upper(split_part(note, ' ', 1)) AS first_word, lpad(length(note)::VARCHAR, 4, '0') AS padded_length
FROM journal
ORDER BY note;

-- name: contains_and_position
-- category: strings_regex
-- ordered: yes
-- ask: Which notes mention a bolus, and where do 'km' and the first comma appear?
SELECT DISTINCT note, contains(note, 'bolus') AS about_bolus, position('km' IN note) AS km_at,
       strpos(note, ',') AS first_comma
FROM journal
ORDER BY note;

-- name: string_agg_notes
-- category: strings_regex
-- ordered: yes
-- ask: All of this week's notes per person in one line
SELECT patient_id, string_agg(note, ' / ' ORDER BY noted_at) AS notes
FROM journal
WHERE noted_at >= now() - INTERVAL 7 DAY
GROUP BY patient_id
ORDER BY patient_id;

-- name: fuzzy_match_note
-- category: strings_regex
-- ordered: yes
-- ask: Which note is closest to "pizza night prebolus"?
SELECT DISTINCT note,
       levenshtein(lower(note), 'pizza night prebolus') AS edit_distance,
       round(jaro_winkler_similarity(lower(note), 'pizza night prebolus'), 3) AS similarity
FROM journal
ORDER BY edit_distance, note
LIMIT 3;

-- name: regexp_full_match_model
-- category: strings_regex
-- ordered: yes
-- ask: Devices whose model is a Dexcom G-series
SELECT DISTINCT model, regexp_full_match(model, 'Dexcom G\d+') AS dexcom_g
FROM devices
ORDER BY model;

-- name: trim_replace_reverse
-- category: strings_regex
-- ordered: yes
-- ask: Clean up names and make slugs
SELECT display_name, lower(replace(trim(display_name), ' ', '-')) AS slug, reverse(display_name) AS backwards,
       repeat('*', length(display_name)) AS masked, md5(display_name) AS hash
FROM patients
ORDER BY patient_id;

-- name: exercise_notes
-- category: strings_regex
-- ordered: yes
-- ask: Notes about exercise (ran, hike, swim)
SELECT entry_id, note
FROM journal
WHERE regexp_matches(note, '(?i)\b(ran|hike|swimming)\b')
ORDER BY entry_id;

-- name: similar_to_and_regexp_split
-- category: strings_regex
-- ordered: yes
-- ask: Split notes into words and count the most common words
SELECT lower(word) AS word, count(*) AS uses
FROM (SELECT unnest(regexp_split_to_array(note, '[^A-Za-z]+')) AS word FROM journal)
WHERE length(word) > 3
GROUP BY 1
ORDER BY uses DESC, word
LIMIT 10;

-------------------------------------------------------------------------------------------------
-- Date and time arithmetic
-------------------------------------------------------------------------------------------------

-- name: age_of_patients
-- category: date_arithmetic
-- ordered: yes
-- ask: How old is everyone, and how many years since diagnosis?
SELECT display_name, date_part('year', age(birth_date)) AS age_years,
       datediff('year', diagnosed_on, current_date) AS years_since_diagnosis_boundaries,
       date_sub('year', diagnosed_on, current_date) AS full_years_since_diagnosis
FROM patients
ORDER BY patient_id;

-- name: age_as_interval
-- category: date_arithmetic
-- ordered: yes
-- ask: Exact age at diagnosis
SELECT display_name, age(diagnosed_on, birth_date) AS age_at_diagnosis
FROM patients
ORDER BY patient_id;

-- name: date_parts_of_readings
-- category: date_arithmetic
-- ordered: yes
-- ask: Calendar parts of the first reading of each person
SELECT patient_id, min(read_at) AS first_at,
       date_part('year', min(read_at)) AS year, date_part('month', min(read_at)) AS month,
       dayofweek(min(read_at)) AS dow, weekofyear(min(read_at)) AS week, dayofyear(min(read_at)) AS doy,
       quarter(min(read_at)) AS quarter
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: epoch_values
-- category: date_arithmetic
-- ordered: yes
-- ask: Unix timestamps of the first readings
SELECT reading_id, epoch(read_at) AS epoch_seconds, epoch_ms(read_at) AS epoch_millis,
       to_timestamp(epoch(read_at)) = read_at AS round_trips
FROM cgm_readings
WHERE reading_id <= 3
ORDER BY reading_id;

-- name: last_day_and_make_date
-- category: date_arithmetic
-- ordered: yes
-- ask: Month ends and first days of the months in my data
SELECT DISTINCT date_trunc('month', read_at)::DATE AS month_start, last_day(read_at::DATE) AS month_end,
       make_date(year(read_at), month(read_at), 15) AS mid_month
FROM cgm_readings
ORDER BY month_start;

-- name: interval_arithmetic
-- category: date_arithmetic
-- ask: Interval arithmetic
SELECT INTERVAL 90 MINUTE * 2 AS three_hours, to_minutes(90) AS ninety_minutes,
       INTERVAL 1 DAY - INTERVAL 1 HOUR AS day_minus_hour, to_days(10) + to_hours(5) AS ten_days_five_hours,
       INTERVAL '2 hours 30 minutes' AS from_text, INTERVAL 1 MONTH + INTERVAL 3 DAY AS month_and_days;

-- name: duration_of_data
-- category: date_arithmetic
-- ordered: yes
-- ask: How much time do the readings span per person?
SELECT patient_id, max(read_at) - min(read_at) AS span, age(max(read_at), min(read_at)) AS span_age,
       date_diff('day', min(read_at), max(read_at)) AS days, date_diff('hour', min(read_at), max(read_at)) AS hours
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: extract_epoch_from_interval
-- category: date_arithmetic
-- ordered: yes
-- ask: Gap lengths in minutes
SELECT patient_id, extract(epoch FROM max(next_at - read_at)) / 60 AS longest_gap_minutes
FROM (SELECT patient_id, read_at, lead(read_at) OVER (PARTITION BY patient_id ORDER BY read_at) AS next_at FROM cgm_readings)
GROUP BY patient_id
ORDER BY patient_id;

-- name: strptime_parse
-- category: date_arithmetic
-- ask: Parse dates the way they are written on a lab report
SELECT strptime('03/15/2026 08:30', '%m/%d/%Y %H:%M') AS lab_time,
       strptime('2026-03-15', '%Y-%m-%d')::DATE AS lab_date,
       try_strptime('not a date', '%Y-%m-%d') AS bad;

-- name: readings_at_fixed_local_times
-- category: date_arithmetic
-- ordered: yes
-- ask: My 7:00 am readings over the last 5 days
SELECT read_at::DATE AS day, glucose
FROM cgm_readings
WHERE patient_id = 1
  AND (read_at AT TIME ZONE 'America/New_York')::TIME = TIME '07:00:00'
  AND read_at >= current_date - 5
ORDER BY day;

-- name: date_add_and_sub
-- category: date_arithmetic
-- ordered: yes
-- ask: When does each current sensor expire, and is it within a day?
SELECT device_id, expires_at, date_add(started_at, INTERVAL 10 DAY) = expires_at AS ten_day_sensor,
       expires_at - INTERVAL 1 DAY < now() AS expires_within_a_day
FROM devices
WHERE kind = 'cgm' AND expires_at > now()
ORDER BY device_id;

-- name: time_of_day_local
-- category: date_arithmetic
-- ordered: yes
-- ask: Average local clock time of breakfast boluses
SELECT patient_id,
       TIME '00:00' + to_seconds(round(avg(epoch((given_at AT TIME ZONE 'America/New_York')::TIME)))::BIGINT) AS mean_breakfast_time
FROM boluses
WHERE meal = 'breakfast'
GROUP BY patient_id
ORDER BY patient_id;

-- name: generate_series_timestamps
-- category: date_arithmetic
-- ordered: yes
-- ask: Hour marks of a fixed day (time zone independent)
SELECT ts
FROM generate_series(TIMESTAMP '2026-01-01 00:00', TIMESTAMP '2026-01-01 03:00', INTERVAL 30 MINUTE) AS t(ts)
ORDER BY ts;

-- name: datediff_units
-- category: date_arithmetic
-- ordered: yes
-- ask: Between my first and last bolus: days, weeks and minutes
SELECT patient_id, datediff('day', min(given_at), max(given_at)) AS days,
       datediff('week', min(given_at), max(given_at)) AS weeks,
       datediff('minute', min(given_at), max(given_at)) AS minutes
FROM boluses
GROUP BY patient_id
ORDER BY patient_id;

-- name: time_bucket_15_minutes
-- category: date_arithmetic
-- ordered: yes
-- ask: 15-minute averages for Jordan this afternoon yesterday
SELECT time_bucket(INTERVAL 15 MINUTE, read_at) AS slot, round(avg(glucose), 1) AS mean_glucose
FROM cgm_readings
WHERE patient_id = 3 AND read_at::DATE = current_date - 1 AND hour(read_at) BETWEEN 12 AND 14
GROUP BY 1
ORDER BY 1;

-- name: weekend_vs_weekday
-- category: date_arithmetic
-- ordered: yes
-- ask: Weekends against weekdays
SELECT CASE WHEN isodow(read_at) >= 6 THEN 'weekend' ELSE 'weekday' END AS kind_of_day,
       round(avg(glucose), 1) AS mean_glucose, count(DISTINCT read_at::DATE) AS days
FROM cgm_readings
GROUP BY 1
ORDER BY 1;

-------------------------------------------------------------------------------------------------
-- Statistics
-------------------------------------------------------------------------------------------------

-- name: spread_statistics
-- category: statistics
-- ordered: yes
-- ask: Standard deviations and variance per person
SELECT patient_id, stddev_samp(glucose) AS sd_sample, stddev_pop(glucose) AS sd_population,
       var_samp(glucose) AS variance, mad(glucose) AS mad
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: carbs_vs_insulin_correlation
-- category: statistics
-- ordered: yes
-- ask: How closely does meal insulin follow carbs?
SELECT patient_id, round(corr(carbs_g, units), 4) AS correlation, count(*) AS meals
FROM boluses
WHERE kind = 'meal'
GROUP BY patient_id
ORDER BY patient_id;

-- name: regression_carb_ratio
-- category: statistics
-- ordered: yes
-- ask: Estimate my effective carb ratio from the bolus history
SELECT patient_id,
       round(regr_slope(units, carbs_g), 4) AS units_per_gram,
       round(1 / regr_slope(units, carbs_g), 1) AS grams_per_unit,
       round(regr_intercept(units, carbs_g), 3) AS intercept,
       round(regr_r2(units, carbs_g), 4) AS r2
FROM boluses
WHERE kind = 'meal'
GROUP BY patient_id
ORDER BY patient_id;

-- name: median_and_mode
-- category: statistics
-- ordered: yes
-- ask: Median glucose and most common trend arrow per person
SELECT patient_id, median(glucose) AS median_glucose, mode(trend) AS most_common_trend
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: skewness_kurtosis
-- category: statistics
-- ordered: yes
-- ask: Is my glucose distribution skewed?
SELECT patient_id, round(skewness(glucose), 4) AS skewness, round(kurtosis(glucose), 4) AS kurtosis
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: covariance_glucose_basal
-- category: statistics
-- ordered: yes
-- ask: Covariance of glucose with the basal rate in force
SELECT r.patient_id, covar_pop(r.glucose, b.units_per_hour) AS covariance, corr(r.glucose, b.units_per_hour) AS correlation
FROM cgm_readings r
ASOF JOIN basal_rates b ON r.patient_id = b.patient_id AND r.read_at >= b.starts_at
GROUP BY r.patient_id
ORDER BY r.patient_id;

-- name: entropy_of_trends
-- category: statistics
-- ordered: yes
-- ask: How varied are the trend arrows (entropy)?
SELECT patient_id, round(entropy(trend), 4) AS trend_entropy, count(DISTINCT trend) AS arrows
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: quantiles_list_disc
-- category: statistics
-- ordered: yes
-- ask: Deciles of glucose per person
SELECT patient_id, quantile_disc(glucose, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]) AS deciles
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: z_score_outliers
-- category: statistics
-- ordered: yes
-- ask: Readings more than 3 standard deviations from each person's mean
SELECT patient_id, count(*) AS outliers, min(glucose) AS lowest, max(glucose) AS highest
FROM (
    SELECT patient_id, glucose,
           (glucose - avg(glucose) OVER (PARTITION BY patient_id)) / stddev_samp(glucose) OVER (PARTITION BY patient_id) AS z
    FROM cgm_readings
)
WHERE abs(z) > 3
GROUP BY patient_id
ORDER BY patient_id;

-- name: arg_min_first_reading
-- category: statistics
-- ordered: yes
-- ask: Each person's first reading value and the time of their lowest reading
SELECT patient_id, arg_min(glucose, read_at) AS first_glucose,
       min_by(read_at, (glucose, read_at)) AS lowest_at, max_by(glucose, read_at) AS last_glucose
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: large_integer_sums
-- category: statistics
-- ordered: yes
-- ask: Sums per person, and a checksum of the reading times to compare two exports
SELECT patient_id, sum(glucose) AS glucose_sum, sum(glucose * glucose) AS sum_of_squares,
       sum(epoch_ms(read_at)) AS timestamp_checksum
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: bool_aggregates
-- category: statistics
-- ordered: yes
-- ask: Did everyone ever go above 300, and was anyone always above 40?
SELECT patient_id, bool_or(glucose > 300) AS ever_above_300, bool_and(glucose >= 40) AS never_below_40
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: decimal_averages
-- category: statistics
-- ordered: yes
-- ask: Average bolus size, min and max (decimal insulin units)
SELECT patient_id, avg(units) AS mean_units, min(units) AS smallest, max(units) AS largest,
       sum(units) / count(*) AS mean_by_hand
FROM boluses
GROUP BY patient_id
ORDER BY patient_id;

-------------------------------------------------------------------------------------------------
-- Everyday joins and lookups
-------------------------------------------------------------------------------------------------

-- name: all_patients
-- category: joins_basics
-- ordered: yes
-- ask: Who is in the database?
SELECT * FROM patients ORDER BY patient_id;

-- name: first_readings
-- category: joins_basics
-- ordered: yes
-- ask: Show me the first few readings
SELECT * FROM cgm_readings ORDER BY reading_id LIMIT 5;

-- name: readings_per_patient_with_names
-- category: joins_basics
-- ordered: yes
-- ask: How many readings per person, with their names and targets
SELECT p.display_name, p.target_low, p.target_high, count(r.reading_id) AS readings,
       round(100.0 * avg((r.glucose BETWEEN p.target_low AND p.target_high)::INTEGER), 1) AS personal_tir_pct
FROM patients p
LEFT JOIN cgm_readings r USING (patient_id)
GROUP BY ALL
ORDER BY p.display_name;

-- name: total_daily_dose
-- category: joins_basics
-- ordered: yes
-- ask: Total daily insulin (basal + bolus) yesterday
WITH basal AS (
    SELECT patient_id, sum(units_per_hour * date_diff('minute', greatest(starts_at, (current_date - 1)::TIMESTAMPTZ),
                                              least(next_start, current_date::TIMESTAMPTZ)) / 60.0) AS basal_units
    FROM (SELECT *, lead(starts_at) OVER (PARTITION BY patient_id ORDER BY starts_at) AS next_start FROM basal_rates)
    WHERE next_start > (current_date - 1)::TIMESTAMPTZ AND starts_at < current_date::TIMESTAMPTZ
    GROUP BY patient_id
),
bolus AS (
    SELECT patient_id, sum(units) AS bolus_units
    FROM boluses
    WHERE given_at::DATE = current_date - 1
    GROUP BY patient_id
)
SELECT patient_id, round(basal_units, 2) AS basal_units, bolus_units, round(basal_units + bolus_units, 2) AS total_daily_dose
FROM basal
JOIN bolus USING (patient_id)
ORDER BY patient_id;

-- name: devices_with_reading_counts
-- category: joins_basics
-- ordered: yes
-- ask: Readings recorded by each sensor, including the pumps with none
SELECT d.device_id, d.kind, count(r.reading_id) AS readings
FROM devices d
LEFT JOIN cgm_readings r ON r.device_id = d.device_id
GROUP BY ALL
ORDER BY d.device_id;

-- name: patients_without_readings_today
-- category: joins_basics
-- ordered: yes
-- ask: Is there anyone without readings in the last 10 minutes?
SELECT p.display_name,
       NOT EXISTS (SELECT 1 FROM cgm_readings r WHERE r.patient_id = p.patient_id AND r.read_at >= now() - INTERVAL 10 MINUTE) AS silent
FROM patients p
ORDER BY p.display_name;

-- name: distinct_models
-- category: joins_basics
-- ask: Which device models do we use?
SELECT DISTINCT model, kind FROM devices;

-- name: timeline_union_all
-- category: joins_basics
-- ordered: yes
-- ask: Everything that happened to Jordan yesterday evening
SELECT given_at AS happened_at, 'bolus ' || units || ' U' AS event FROM boluses
WHERE patient_id = 3 AND given_at::DATE = current_date - 1 AND hour(given_at) >= 17
UNION ALL
SELECT occurred_at, event_type FROM pump_events
WHERE patient_id = 3 AND occurred_at::DATE = current_date - 1 AND hour(occurred_at) >= 17
UNION ALL
SELECT noted_at, 'note: ' || note FROM journal
WHERE patient_id = 3 AND noted_at::DATE = current_date - 1
ORDER BY happened_at, event;

-- name: range_join_post_meal
-- category: joins_basics
-- ordered: yes
-- ask: Average glucose 110-130 minutes after meals, per meal size band
SELECT CASE WHEN b.carbs_g < 50 THEN 'small' WHEN b.carbs_g < 80 THEN 'medium' ELSE 'large' END AS meal_size,
       count(DISTINCT b.bolus_id) AS meals, round(avg(r.glucose), 1) AS mean_2h
FROM boluses b
JOIN cgm_readings r
  ON r.patient_id = b.patient_id
 AND r.read_at BETWEEN b.given_at + INTERVAL 110 MINUTE AND b.given_at + INTERVAL 130 MINUTE
WHERE b.kind = 'meal'
GROUP BY 1
ORDER BY 1;

-- name: in_subquery
-- category: joins_basics
-- ordered: yes
-- ask: Readings of people on an Omnipod
SELECT patient_id, count(*) AS readings
FROM cgm_readings
WHERE patient_id IN (SELECT patient_id FROM devices WHERE model = 'Omnipod 5')
GROUP BY patient_id
ORDER BY patient_id;

-- name: scalar_subquery
-- category: joins_basics
-- ordered: yes
-- ask: Each person's mean compared with everyone's mean
SELECT patient_id, round(avg(glucose), 1) AS mean_glucose,
       round(avg(glucose) - (SELECT avg(glucose) FROM cgm_readings), 1) AS vs_everyone
FROM cgm_readings
GROUP BY patient_id
ORDER BY patient_id;

-- name: exists_correlated
-- category: joins_basics
-- ordered: yes
-- ask: Days on which Sam had a low after a correction bolus
SELECT DISTINCT b.given_at::DATE AS day
FROM boluses b
WHERE b.patient_id = 2 AND b.kind = 'meal' AND b.meal = 'lunch'
  AND EXISTS (
      SELECT 1 FROM cgm_readings r
      WHERE r.patient_id = b.patient_id AND r.glucose < 70
        AND r.read_at BETWEEN b.given_at AND b.given_at + INTERVAL 5 HOUR
  )
ORDER BY day;

-- name: intersect_and_except
-- category: joins_basics
-- ordered: yes
-- ask: Days with both a low and a high, and days with a low but no high, for Sam
SELECT 'low and high' AS kind, day FROM (
    SELECT read_at::DATE AS day FROM cgm_readings WHERE patient_id = 2 AND glucose < 70
    INTERSECT
    SELECT read_at::DATE FROM cgm_readings WHERE patient_id = 2 AND glucose > 250
)
UNION ALL
SELECT 'low, no very high', day FROM (
    SELECT read_at::DATE AS day FROM cgm_readings WHERE patient_id = 2 AND glucose < 70
    EXCEPT
    SELECT read_at::DATE FROM cgm_readings WHERE patient_id = 2 AND glucose > 250
)
ORDER BY kind, day;

-- name: natural_join_devices_patients
-- category: joins_basics
-- ordered: yes
-- ask: Pumps with their owners
SELECT display_name, model, started_at
FROM devices
NATURAL JOIN patients
WHERE kind = 'pump'
ORDER BY display_name;

-- name: join_using_multiple_tables
-- category: joins_basics
-- ordered: yes
-- ask: Per person: readings, boluses and pump events
SELECT patient_id, r.readings, b.boluses, e.events
FROM (SELECT patient_id, count(*) AS readings FROM cgm_readings GROUP BY 1) r
JOIN (SELECT patient_id, count(*) AS boluses FROM boluses GROUP BY 1) b USING (patient_id)
JOIN (SELECT patient_id, count(*) AS events FROM pump_events GROUP BY 1) e USING (patient_id)
ORDER BY patient_id;

-- name: full_outer_join_days
-- category: joins_basics
-- ordered: yes
-- ask: Days with journal entries or boluses for Alex in the last 10 days
SELECT coalesce(j.day, b.day) AS day, j.notes, b.boluses
FROM (SELECT noted_at::DATE AS day, count(*) AS notes FROM journal WHERE patient_id = 1 GROUP BY 1) j
FULL OUTER JOIN (SELECT given_at::DATE AS day, count(*) AS boluses FROM boluses WHERE patient_id = 1 GROUP BY 1) b
  ON j.day = b.day
WHERE coalesce(j.day, b.day) >= current_date - 10
ORDER BY day;

-------------------------------------------------------------------------------------------------
-- The catalog, as an agent explores it
-------------------------------------------------------------------------------------------------

-- name: information_schema_columns
-- category: catalog
-- ordered: yes
-- ask: What columns and types does boluses have (information_schema)?
SELECT column_name, data_type, is_nullable
FROM information_schema.columns
WHERE table_name = 'boluses'
ORDER BY ordinal_position;

-- name: table_comments
-- category: catalog
-- ordered: yes
-- ask: Which tables have a description?
SELECT table_name, comment
FROM duckdb_tables()
WHERE comment IS NOT NULL AND database_name = 'health'
ORDER BY table_name;

-- name: column_comments
-- category: catalog
-- ordered: yes
-- ask: Which columns are documented?
SELECT table_name, column_name, data_type, comment
FROM duckdb_columns()
WHERE comment IS NOT NULL AND database_name = 'health'
ORDER BY table_name, column_name;

-- name: views_and_definitions
-- category: catalog
-- ordered: yes
-- ask: Which views exist?
SELECT view_name, column_count
FROM duckdb_views()
WHERE NOT internal AND database_name = 'health'
ORDER BY view_name;

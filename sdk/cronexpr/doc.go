// Package cronexpr parses the expressions of recurring schedules and computes
// their fire times, with the spec's meaning:
//
//   - 5 fields (minute hour day-of-month month day-of-week), the Unix form:
//     days of the week 0-6 or SUN-SAT, 0 = Sunday; when both the day of
//     the month and the day of the week are restricted, a day matching
//     either fires (as in Vixie cron);
//   - 6 fields (second minute hour day-of-month month day-of-week), the
//     spec's Quartz form, whose default is "0 0 1 * * ?" (1 AM daily):
//     days of the week 1-7 or SUN-SAT, 1 = Sunday; "?" means no
//     restriction; the day of the month and the day of the week cannot
//     both be restricted (Quartz refuses that too);
//   - descriptors: @yearly (@annually), @monthly, @weekly, @daily
//     (@midnight), @hourly, and @every with a duration of at least a
//     second ("@every 90s").
//
// Quartz's L, W and # (last day, nearest weekday, nth weekday) and its
// optional year field are refused with an error naming the field, never
// read as something else: a schedule never fires on a day the spec would
// not. A time zone comes with each schedule (Parse's zone), not inside the
// expression.
//
// Wall-clock time is what the fields match, in the schedule's zone, and
// daylight-saving changes are resolved once: a slot whose wall time does
// not exist (a spring-forward gap) fires at the first instant after the
// gap; a wall time that occurs twice (a fall-back overlap) fires at its
// first occurrence only. @every counts real time from the previous slot.
//
// Parsing uses github.com/robfig/cron/v3, the well-kept parser most Go
// schedulers build on; this package adds the Quartz day numbering, the
// refusals and the daylight-saving rules above, which it evaluates itself
// on the parsed fields.
package cronexpr

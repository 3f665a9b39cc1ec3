package ratchet_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// FuzzJobFilter: the filters an operator types (the ratchet command's
// flags, the dashboard's form) parse into ListOptions or fail with an error
// that wraps ErrInvalidArgument, never a panic; what parses is in range.
func FuzzJobFilter(f *testing.F) {
	f.Add("failed", "email.send", "vip", "normal,HIGH", "timeout", "2026-12-01", "2026-12-06T10:00:00Z", "tenant=acme")
	f.Add("", "", "", "4", "", "2026-12-01T10:00", "2026-12-01T10:00:05", "")
	f.Add("RUNNING", "", "", "lowest, critical ,2", "", "", "", "k=")
	f.Add("nope", "", "", "7", "", "yesterday", "", "=v")
	f.Add("", "", "", ",,", "", "2026-13-01", "2026-12-01T25:00", "no-equals")
	f.Fuzz(func(t *testing.T, status, task, tag, priorities, errText, from, before, property string) {
		fl := ratchet.JobFilter{Status: status, Task: task, Tag: tag, ErrorContains: errText,
			CreatedFrom: from, CreatedBefore: before, Property: property}
		if priorities != "" {
			fl.Priorities = strings.Split(priorities, ";")
		}
		o, err := fl.ListOptions()
		if err != nil {
			if !errors.Is(err, ratchet.ErrInvalidArgument) {
				t.Fatalf("%+v: error %v does not wrap ErrInvalidArgument", fl, err)
			}
			return
		}
		for _, p := range o.Priorities {
			if p < ratchet.PriorityLowest || p > ratchet.PriorityCritical {
				t.Fatalf("%+v: priority %d out of range", fl, p)
			}
		}
		if !o.CreatedFrom.IsZero() && !o.CreatedBefore.IsZero() && o.CreatedFrom.Location() != o.CreatedBefore.Location() {
			t.Fatalf("%+v: times in two zones", fl)
		}
	})
}

// FuzzScheduleOptions: a recurring schedule's id, expression, zone and
// misfire policy either register (PutSchedule) or fail with an error,
// never a panic; one that registers reads back as given.
func FuzzScheduleOptions(f *testing.F) {
	f.Add("daily-eu", "0 0 9 ? * MON-FRI", "Europe/Berlin", "SKIP", 0)
	f.Add("every", "@every 90s", "", "FIRE_ONCE", 3)
	f.Add("", "* * * * *", "UTC", "CATCH_UP", 10)
	f.Add("x", "0 0 L * *", "Mars/Olympus", "NOW", -1)
	f.Add(strings.Repeat("a", 300), "@hourly", "", "CATCH_UP", 1<<20)
	ctx := context.Background()
	client, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id, expr, zone, policy string, catchUp int) {
		r := bill.Recurring(id, expr, Invoice{Customer: "acme", Cents: 1}, ratchet.InZone(zone),
			ratchet.OnMisfire(ratchet.MisfirePolicy(policy), catchUp))
		if _, err := client.PutSchedule(ctx, r); err != nil {
			return
		}
		info, err := client.GetSchedule(ctx, id)
		if err != nil {
			t.Fatalf("schedule %q registered but not read back: %v", id, err)
		}
		if info.Definition.Expr != expr || info.Task != bill.Name() {
			t.Fatalf("schedule %q reads back %q of %q", id, info.Definition.Expr, info.Task)
		}
	})
}

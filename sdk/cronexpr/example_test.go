package cronexpr_test

import (
	"fmt"
	"time"

	"github.com/ratchet-go/ratchet/sdk/cronexpr"
)

// The spec's 6-field form, in a time zone: weekdays at 9 AM in Berlin.
func ExampleParse() {
	s, err := cronexpr.Parse("0 0 9 ? * MON-FRI", "Europe/Berlin")
	if err != nil {
		fmt.Println(err)
		return
	}
	at := time.Date(2026, 3, 6, 12, 0, 0, 0, time.UTC) // a Friday
	for range 2 {
		at = s.Next(at)
		fmt.Println(at.Format("Mon 2006-01-02 15:04 MST"))
	}
	_, err = cronexpr.Parse("0 0 9 ? * 6#3", "")
	fmt.Println(err)
	// Output:
	// Mon 2026-03-09 09:00 CET
	// Tue 2026-03-10 09:00 CET
	// cron expression "0 0 9 ? * 6#3": day-of-week field "6#3": L (last), W (nearest weekday) and # (nth weekday) are not supported
}

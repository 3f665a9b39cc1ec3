package spi

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// StatsSampleStore is implemented by stores that keep a history of the job
// counts by status, one sample per minute, so that charts drawn from it
// (the dashboard's overview) outlive the process that draws them. Every
// process that samples (each dashboard) records into the same minutes:
// the first sample of a minute is kept and the others are not, so the
// history has one sample per minute however many processes sample.
type StatsSampleStore interface {
	// RecordStatsSample keeps s as the sample of its minute (s.At
	// truncated to the minute, in UTC) unless that minute has one
	// already, and reports whether it kept it. It then drops the samples
	// older than StatsSampleRetention before s.At.
	RecordStatsSample(ctx context.Context, s StatsSample) (bool, error)
	// StatsSamples returns the samples of since's minute and of the
	// later ones, oldest first, at most limit (zero or less: StatsSampleRetention's
	// minutes). A sample whose stored counts cannot be read is left out.
	StatsSamples(ctx context.Context, since time.Time, limit int) ([]StatsSample, error)
}

// StatsSampleRetention is how long a StatsSampleStore keeps a sample.
const StatsSampleRetention = 24 * time.Hour

// StatsSample is the number of live jobs of each status at one minute.
type StatsSample struct {
	// At is the sample's minute (a StatsSampleStore keeps it truncated
	// to the minute, in UTC).
	At time.Time
	// Counts are the jobs of each status; a status without jobs may be
	// absent.
	Counts map[Status]int64
}

// Minute is the sample's minute: At truncated to the minute, in UTC.
func (s StatsSample) Minute() time.Time {
	return s.At.UTC().Truncate(time.Minute)
}

// EncodeStatsCounts is the stored form of a sample's counts: a JSON object
// of status to count, zero counts left out.
func EncodeStatsCounts(counts map[Status]int64) string {
	m := make(map[string]int64, len(counts))
	for st, n := range counts {
		if n != 0 {
			m[string(st)] = n
		}
	}
	b, _ := json.Marshal(m) // a map of strings to integers always encodes
	return string(b)
}

// DecodeStatsCounts reads the stored form of a sample's counts (see
// EncodeStatsCounts); an error when it is not one.
func DecodeStatsCounts(s string) (map[Status]int64, error) {
	var m map[string]int64
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("stats sample counts: %w", err)
	}
	out := make(map[Status]int64, len(m))
	for st, n := range m {
		out[Status(st)] = n
	}
	return out, nil
}

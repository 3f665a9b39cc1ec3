package stored

import (
	"testing"
	"time"
)

func TestSlotKeyIsUTCAndStable(t *testing.T) {
	slot := time.Date(2026, 12, 6, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	if got, want := SlotKey("report", slot), "ratchet-schedule:report@2026-12-06T09:00:00Z"; got != want {
		t.Fatalf("SlotKey = %q, want %q (stored keys must never change)", got, want)
	}
}

func TestSlotOfReadsASlotKey(t *testing.T) {
	slot := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	id, got, ok := SlotOf(SlotKey("report@eu", slot))
	if !ok || id != "report@eu" || !got.Equal(slot) {
		t.Fatalf("SlotOf = %q, %s, %v", id, got, ok)
	}
	for _, key := range []string{"", "welcome-ada", "ratchet-schedule:x", "ratchet-schedule:x@not-a-time"} {
		if _, _, ok := SlotOf(key); ok {
			t.Errorf("SlotOf(%q) is a slot", key)
		}
	}
}

func TestSealedTextRoundTrip(t *testing.T) {
	s := SealText([]byte{0, 1, 2, 0xff})
	b, sealed, err := SealedText(s)
	if !sealed || err != nil || string(b) != "\x00\x01\x02\xff" {
		t.Fatalf("SealedText(%q) = %v, %v, %v", s, b, sealed, err)
	}
	if _, sealed, err := SealedText("a plain log line"); sealed || err != nil {
		t.Fatalf("a plain text is not sealed: %v %v", sealed, err)
	}
	if _, sealed, err := SealedText("\x1bratchet-sealed:%%%"); !sealed || err == nil {
		t.Fatalf("a sealed text with broken base64 is sealed and an error: %v %v", sealed, err)
	}
}

func TestTruncateCutsOnARuneBoundary(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{{"héllo", 2, "h"}, {"héllo", 3, "hé"}, {"short", 10, "short"}, {"abc", -1, ""}} {
		if got := Truncate(c.in, c.max); got != c.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

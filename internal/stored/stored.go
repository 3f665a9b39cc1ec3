package stored

import (
	"encoding/base64"
	"strings"
	"time"
	"unicode/utf8"
)

// SlotKey is the idempotency key of the job of schedule id's slot at slot:
// the unique key that makes each slot fire once.
func SlotKey(id string, slot time.Time) string {
	return slotPrefix + id + "@" + slot.UTC().Format(time.RFC3339)
}

// slotPrefix starts every SlotKey.
const slotPrefix = "ratchet-schedule:"

// SlotOf returns the schedule id and the slot of a key that SlotKey made,
// and false for any other key.
func SlotOf(key string) (id string, slot time.Time, ok bool) {
	rest, ok := strings.CutPrefix(key, slotPrefix)
	if !ok {
		return "", time.Time{}, false
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return "", time.Time{}, false
	}
	slot, err := time.Parse(time.RFC3339, rest[at+1:])
	if err != nil {
		return "", time.Time{}, false
	}
	return rest[:at], slot, true
}

// sealedPrefix starts a text value whose bytes went through the payload
// codecs: an escape (which no log message of a person starts with) and a
// tag, then the codecs' bytes in standard base64. It is stored: never
// change it.
const sealedPrefix = "\x1bratchet-sealed:"

// SealText is the text form of codec bytes b.
func SealText(b []byte) string { return sealedPrefix + base64.StdEncoding.EncodeToString(b) }

// SealedText returns the codec bytes of a text that SealText wrote.
// sealed is false for a text that is not sealed (written as it is); err
// tells a sealed text whose base64 is broken.
func SealedText(s string) (b []byte, sealed bool, err error) {
	rest, ok := strings.CutPrefix(s, sealedPrefix)
	if !ok {
		return nil, false, nil
	}
	b, err = base64.StdEncoding.DecodeString(rest)
	return b, true, err
}

// Truncate returns s cut to at most maxBytes bytes on a rune boundary (s
// itself when it is short enough), valid UTF-8.
func Truncate(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	cut := max(maxBytes, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.ToValidUTF8(s[:cut], "")
}

package sqlcore

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// The params column holds a job's params as a JSON object of strings, the
// bytes encoding/json writes for a map[string]string (keys sorted, HTML
// characters escaped). Params are on the hot path (the trace context of
// every traced job rides in them), so EncodeParams and DecodeParams write
// and read the common case, keys and values with nothing to escape, by
// hand, and leave the rest to encoding/json.

// ParamsEncoder is EncodeParams over the rows of one insert: the jobs of
// one submission often carry the same params (a trace context, a batch
// id), and a row whose params equal the last row's reuses its text. The
// zero value is ready to use.
type ParamsEncoder struct {
	last map[string]string
	text string
}

// Encode returns EncodeParams(m).
func (e *ParamsEncoder) Encode(m map[string]string) (string, error) {
	if m == nil {
		return "", nil
	}
	if e.last != nil && maps.Equal(m, e.last) {
		return e.text, nil
	}
	text, err := EncodeParams(m)
	if err != nil {
		return "", err
	}
	e.last, e.text = m, text
	return text, nil
}

// EncodeParams returns the params column of m ("" for a nil map).
func EncodeParams(m map[string]string) (string, error) {
	if m == nil {
		return "", nil
	}
	if len(m) == 1 {
		for k, v := range m {
			if plainJSON(k) && plainJSON(v) {
				return `{"` + k + `":"` + v + `"}`, nil
			}
		}
	}
	n := 2
	for k, v := range m {
		if !plainJSON(k) || !plainJSON(v) {
			b, err := json.Marshal(m)
			return string(b), err
		}
		n += len(k) + len(v) + 6
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.Grow(n)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(k)
		b.WriteString(`":"`)
		b.WriteString(m[k])
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String(), nil
}

// DecodeParams reads a params column written by EncodeParams (or by
// encoding/json) back into a map.
func DecodeParams(s string) (map[string]string, error) {
	if m, ok := decodePlain(s); ok {
		return m, nil
	}
	var m map[string]string
	err := json.Unmarshal([]byte(s), &m)
	return m, err
}

// plainJSON reports whether s is written in JSON as it is: valid UTF-8
// without quotes, backslashes, control characters, or the characters
// encoding/json escapes (<, >, &, U+2028, U+2029).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			if c < utf8.RuneSelf {
				return false
			}
			return plainUnicode(s[i:])
		}
	}
	return true
}

// plainUnicode is plainJSON's check of the part of s from its first
// non-ASCII byte on.
func plainUnicode(s string) bool {
	for _, r := range s {
		switch {
		case r == utf8.RuneError, r == '\u2028', r == '\u2029', r < 0x20, r == '"', r == '\\', r == '<', r == '>', r == '&':
			return false
		}
	}
	return true
}

// decodePlain reads an object of plain strings ({"k":"v",...}, no spaces,
// no escapes); ok is false for anything else, which encoding/json reads.
func decodePlain(s string) (map[string]string, bool) {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' || strings.IndexByte(s, '\\') >= 0 {
		return nil, false
	}
	m := map[string]string{}
	rest := s[1 : len(s)-1]
	for rest != "" {
		k, after, ok := plainString(rest)
		if !ok || len(after) == 0 || after[0] != ':' {
			return nil, false
		}
		v, after, ok := plainString(after[1:])
		if !ok {
			return nil, false
		}
		m[k] = v
		if after == "" {
			break
		}
		if after[0] != ',' || len(after) == 1 {
			return nil, false
		}
		rest = after[1:]
	}
	return m, true
}

// plainString reads a quoted string without escapes at the start of s.
func plainString(s string) (str, rest string, ok bool) {
	if len(s) < 2 || s[0] != '"' {
		return "", "", false
	}
	end := strings.IndexByte(s[1:], '"')
	if end < 0 {
		return "", "", false
	}
	str = s[1 : 1+end]
	if !utf8.ValidString(str) {
		return "", "", false
	}
	for i := 0; i < len(str); i++ {
		if str[i] < 0x20 {
			return "", "", false
		}
	}
	return str, s[2+end:], true
}

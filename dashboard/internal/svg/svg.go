package svg

import (
	"fmt"
	"html/template"
	"math"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// esc returns s escaped for XML text and attribute values: runes that
// XML does not allow (control characters, invalid UTF-8) are dropped,
// then template.HTMLEscapeString escapes <, >, &, ' and ".
func esc(s string) string {
	clean := true
	for i, r := range s {
		if !xmlRune(r) || (r == utf8.RuneError && !validAt(s, i)) {
			clean = false
			break
		}
	}
	if !clean {
		var b strings.Builder
		for i, r := range s {
			if xmlRune(r) && (r != utf8.RuneError || validAt(s, i)) {
				b.WriteRune(r)
			}
		}
		s = b.String()
	}
	return template.HTMLEscapeString(s)
}

// validAt reports whether the utf8.RuneError at s[i] was written as such
// rather than decoded from invalid bytes.
func validAt(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size == 3
}

// xmlRune reports whether r is a character XML 1.0 allows.
func xmlRune(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD ||
		(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

// safeHref returns href escaped for an attribute when it is a relative URL
// or an http or https one, and "" otherwise (javascript:, data: and the
// like, or a URL that does not parse).
func safeHref(href string) string {
	href = strings.TrimSpace(href)
	if href == "" {
		return ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	switch strings.ToLower(u.Scheme) {
	case "", "http", "https":
	default:
		return ""
	}
	if u.Scheme == "" && u.Opaque != "" {
		return ""
	}
	return esc(href)
}

// truncate shortens s to at most n runes, ending it with "…" when cut.
func truncate(s string, n int) string {
	if n < 1 {
		n = 1
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// num formats a coordinate.
func num(f float64) string {
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

// humanize formats a value shortly: 12, 0.5, 1.2k, 3.4M, 5G.
func humanize(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	neg := v < 0
	if neg {
		v = -v
	}
	units := []string{"", "k", "M", "G", "T", "P"}
	i := 0
	for i < len(units)-1 && math.Round(v*10)/10 >= 1000 {
		v /= 1000
		i++
	}
	var s string
	switch {
	case i == 0 && v < 10 && v != math.Trunc(v):
		s = strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	default:
		s = strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	}
	if neg && s != "0" {
		s = "-" + s
	}
	return s + units[i]
}

// niceStep returns a round step (1, 2 or 5 times a power of ten) of at
// least raw.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// open writes the root element and its accessible title; role is "img"
// for a picture without links, "group" for one whose links must stay
// reachable.
func open(b *strings.Builder, class, role, title string, w, h int) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="%s" width="%d" height="%d" viewBox="0 0 %d %d" role="%s" aria-label="%s"><title>%s</title>`,
		class, w, h, w, h, role, esc(title), esc(title))
}

// empty writes the frame of a picture without data.
func empty(b *strings.Builder, w, h int) {
	fmt.Fprintf(b, `<rect class="frame" x="0.5" y="0.5" width="%d" height="%d"/><text class="empty" x="%s" y="%s" text-anchor="middle" dominant-baseline="middle">no data yet</text>`,
		w-1, h-1, num(float64(w)/2), num(float64(h)/2))
}

// classes joins a fixed class and the caller's, escaped.
func classes(fixed, extra string) string {
	extra = strings.TrimSpace(extra)
	if extra == "" {
		return fixed
	}
	return fixed + " " + esc(extra)
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

package ratchet

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"unicode/utf8"
)

// JSONSerializer is the default PayloadSerializer: encoding/json, decoding
// only into the type the task declares.
type JSONSerializer struct{}

// Marshal encodes v as JSON.
func (JSONSerializer) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal decodes JSON data into v. Empty data is an error.
func (JSONSerializer) Unmarshal(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("empty payload")
	}
	return json.Unmarshal(data, v)
}

// DefaultMaxErrorLength bounds stored error text, in bytes.
const DefaultMaxErrorLength = 2000

// DefaultSanitizer is the default ErrorSanitizer: the error's message with
// credentials (password=, token=, api_key=, secret=, bearer tokens) masked,
// truncated to MaxLength bytes (zero means DefaultMaxErrorLength) on a rune
// boundary.
type DefaultSanitizer struct {
	MaxLength int
}

var secretPattern = regexp.MustCompile(`(?i)((?:password|passwd|pwd|token|api[_-]?key|secret)\s*[=:]\s*)[^\s&,;]+|(bearer\s+)[A-Za-z0-9._~+/=-]+`)

// Sanitize implements spi.ErrorSanitizer.
func (s DefaultSanitizer) Sanitize(err error) string {
	if err == nil {
		return ""
	}
	msg := secretPattern.ReplaceAllString(err.Error(), "$1$2***")
	limit := s.MaxLength
	if limit <= 0 {
		limit = DefaultMaxErrorLength
	}
	return TruncateText(msg, limit)
}

// TruncateText returns s cut to at most maxBytes bytes on a rune boundary
// (s itself when it is short enough).
func TruncateText(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	cut := max(maxBytes, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.ToValidUTF8(s[:cut], "")
}

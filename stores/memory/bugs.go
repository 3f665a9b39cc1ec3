//go:build ratchet_bugs

package memory

import (
	"regexp"
	"strings"
)

// Plant makes s behave as the planted defect name of the conformance
// kit's self-test ("" for none): its guard in the store's code
// (s.bug(name)) then breaks what it guards, for the kit to show that one
// of its cases catches it. Only a build with the tag ratchet_bugs has
// Plant; a normal build compiles no guard.
func Plant(s *Store, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.planted.name = name
}

// planted is the defect Plant turned on.
type planted struct{ name string }

// bug reports whether the planted defect is name; s.mu is held.
func (s *Store) bug(name string) bool { return s.planted.name == name }

// likePrefix matches like SQL's key LIKE prefix || '%' without escaping,
// with SQLite's ASCII case folding.
func likePrefix(key, prefix string) bool {
	var b strings.Builder
	b.WriteString("(?is)^")
	for _, r := range prefix {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return regexp.MustCompile(b.String()).MatchString(key)
}

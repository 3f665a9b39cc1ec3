package tools_test

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README is a newcomer's page: at most 300 lines, and it names nothing
// outside the repository; the manual lives in docs/.
func TestReadmeIsANewcomersPage(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	lines := strings.Count(string(data), "\n")
	assert.LessOrEqual(t, lines, 300, "the README has %d lines: move the detail to docs/", lines)
	for _, h := range []string{"Install", "Quick start", "The two commands", "Databases", "Benchmarks", "Layout"} {
		assert.Contains(t, string(data), "\n## "+h+"\n", "the README has a section %q", h)
	}
}

// Every relative link of the README and of docs/ names a file of the
// repository (and, with a fragment, a heading of it); no page points
// outside the repository.
func TestDocLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	for _, page := range docPages(t) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		require.NoError(t, err)
		text := string(data)
		prose := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(text, "")
		prose = regexp.MustCompile("`[^`\n]*`").ReplaceAllString(prose, "")
		assert.NotRegexp(t, `\.\./shared|/work/`, text, "%s names a path outside the repository", page)
		for _, m := range link.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			resolved := page
			if file != "" {
				resolved = path.Join(path.Dir(page), file)
			}
			if strings.HasPrefix(resolved, "../") {
				t.Errorf("%s: link %s leaves the repository", page, target)
				continue
			}
			full := filepath.Join(root, filepath.FromSlash(resolved))
			target2, err := os.ReadFile(full)
			if err != nil {
				if info, serr := os.Stat(full); serr == nil && info.IsDir() {
					continue
				}
				t.Errorf("%s: link %s: no file %s", page, target, resolved)
				continue
			}
			if frag != "" && strings.HasSuffix(resolved, ".md") && !hasAnchor(string(target2), frag) {
				t.Errorf("%s: link %s: %s has no heading #%s", page, target, resolved, frag)
			}
		}
	}
}

// hasAnchor reports whether markdown has a heading whose GitHub anchor is
// frag.
func hasAnchor(markdown, frag string) bool {
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	for _, line := range strings.Split(markdown, "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")
		if a == frag {
			return true
		}
	}
	return false
}

package tools_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"
)

// docPages are the pages whose Go blocks must compile: the README and the
// manual.
func docPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md"}
	err := filepath.WalkDir("../docs", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel("..", p)
			pages = append(pages, filepath.ToSlash(rel))
		}
		return err
	})
	require.NoError(t, err)
	return pages
}

// A docBlock is one fenced block of a page.
type docBlock struct {
	page string
	line int // of the block's first line of code
	lang string
	code string
}

// A docPage is a page's fenced blocks and its prelude: the Go declarations
// (imports, and the variables its fragments use) of a comment
// "<!-- go:prelude ... -->".
type docPage struct {
	name    string
	blocks  []docBlock
	prelude string
	line    int // of the prelude's first line
}

var fence = regexp.MustCompile("^(\\s*)```+\\s*([A-Za-z0-9_+-]*)")

func readDocPage(t *testing.T, name string) docPage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(name)))
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	page := docPage{name: name}
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "<!-- go:prelude" {
			start := i + 1
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "-->"; i++ {
			}
			page.prelude, page.line = strings.Join(lines[start:i], "\n"), start+1
			continue
		}
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := docBlock{page: name, line: i + 2, lang: m[2]}
		var code []string
		for i++; i < len(lines) && !fence.MatchString(lines[i]); i++ {
			code = append(code, strings.TrimPrefix(lines[i], m[1]))
		}
		b.code = strings.Join(code, "\n") + "\n"
		page.blocks = append(page.blocks, b)
	}
	return page
}

// TestEveryGoBlockOfTheDocsCompiles type-checks every block fenced `go` of
// the README and of docs/ against the workspace's modules: a whole program
// (a block that starts with a package clause) as it is; the fragments of
// a page together, in one package with the page's prelude, each
// declaration block at top level and each block of statements in a
// function of its own, where a variable or import it leaves unused is not
// an error. Every fence names its language, so that no Go block escapes.
func TestEveryGoBlockOfTheDocsCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks every page's Go blocks against the workspace")
	}
	work := t.TempDir()
	var dirs []string
	write := func(dir, source string) {
		p := filepath.Join(work, dir)
		require.NoError(t, os.MkdirAll(p, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(p, "go.mod"), []byte("module docblocks/"+dir+"\n\ngo 1.26.0\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(p, "main.go"), []byte(source), 0o644))
		dirs = append(dirs, dir)
	}
	fragmentDirs := map[string]bool{}
	blocks := 0
	for _, name := range docPages(t) {
		page := readDocPage(t, name)
		slug := regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(strings.TrimSuffix(name, ".md")), "_")
		var frag strings.Builder
		fragments := 0
		for i, b := range page.blocks {
			if b.lang == "" {
				t.Errorf("%s:%d: a fenced block without a language: fence it go, sh, text, yaml, ...", b.page, b.line-1)
				continue
			}
			if b.lang != "go" {
				continue
			}
			blocks++
			if strings.HasPrefix(b.code, "package ") {
				write(fmt.Sprintf("%s_%d", slug, i), fmt.Sprintf("//line %s:%d\n%s", b.page, b.line, b.code))
				continue
			}
			fragments++
			if _, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+b.code, 0); err == nil {
				fmt.Fprintf(&frag, "\n//line %s:%d\n%s", b.page, b.line, b.code)
			} else {
				fmt.Fprintf(&frag, "\nfunc _() {\n//line %s:%d\n%s}\n", b.page, b.line, b.code)
			}
		}
		if fragments > 0 {
			dir := slug + "_fragments"
			prelude := ""
			if page.line > 0 {
				prelude = fmt.Sprintf("//line %s:%d\n%s\n", page.name, page.line, page.prelude)
			}
			write(dir, fmt.Sprintf("package main\n\n%s\nfunc main() {}\n%s", prelude, frag.String()))
			fragmentDirs["docblocks/"+dir] = true
		}
	}
	require.Positive(t, blocks, "no Go block found")

	// A workspace of the repository's modules and the generated ones.
	data, err := os.ReadFile("../go.work")
	require.NoError(t, err)
	wf, err := modfile.ParseWork("go.work", data, nil)
	require.NoError(t, err)
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	var gowork strings.Builder
	gowork.WriteString("go " + wf.Go.Version + "\n\nuse (\n")
	for _, u := range wf.Use {
		fmt.Fprintf(&gowork, "\t%s\n", filepath.Join(root, u.Path))
	}
	for _, d := range dirs {
		fmt.Fprintf(&gowork, "\t./%s\n", d)
	}
	gowork.WriteString(")\n")
	require.NoError(t, os.WriteFile(filepath.Join(work, "go.work"), []byte(gowork.String()), 0o644))
	if sum, err := os.ReadFile("../go.work.sum"); err == nil {
		require.NoError(t, os.WriteFile(filepath.Join(work, "go.work.sum"), sum, 0o644))
	}

	var patterns []string
	for _, d := range dirs {
		patterns = append(patterns, "docblocks/"+d)
	}
	pkgs, err := packages.Load(&packages.Config{
		Mode: packages.NeedName | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:  work,
		Env:  append(os.Environ(), "GOWORK="+filepath.Join(work, "go.work"), "GOFLAGS=-mod=readonly"),
	}, patterns...)
	require.NoError(t, err)
	require.Len(t, pkgs, len(dirs))
	unused := regexp.MustCompile(`declared and not used|imported and not used`)
	for _, p := range pkgs {
		for _, e := range p.Errors {
			if fragmentDirs[p.PkgPath] && unused.MatchString(e.Msg) {
				continue
			}
			msg := e.Error()
			for _, d := range dirs {
				msg = strings.ReplaceAll(msg, filepath.Join(work, d)+string(filepath.Separator), "")
			}
			t.Error(msg)
		}
	}
	slices.Sort(dirs)
	t.Logf("%d Go blocks of %d pages in %d packages", blocks, len(docPages(t)), len(dirs))
}

package release

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// Module is one module of the workspace.
type Module struct {
	// Dir is the module's folder relative to the workspace root, with
	// slashes ("stores/postgres"); it is also the prefix of its tags.
	Dir string
	// Path is the module path ("github.com/ratchet-go/ratchet/stores/postgres").
	Path string
}

// Tag is the module's tag for version ("stores/postgres/v0.1.0").
func (m Module) Tag(version string) string {
	if m.Dir == "." {
		return version
	}
	return m.Dir + "/" + version
}

// Public reports whether the module holds packages a user may import: a
// module under an internal/ folder does not (others in the repository
// require it, so it is released all the same).
func (m Module) Public() bool {
	return !slices.Contains(strings.Split(m.Dir, "/"), "internal")
}

// Workspace lists the modules that root's go.work uses, in its order.
func Workspace(root string) ([]Module, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, fmt.Errorf("release: the workspace root must hold a go.work: %w", err)
	}
	work, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	var mods []Module
	for _, u := range work.Use {
		dir := path.Clean(filepath.ToSlash(u.Path))
		if path.IsAbs(dir) || strings.HasPrefix(dir, "../") {
			return nil, fmt.Errorf("release: go.work uses %s, outside the repository", u.Path)
		}
		mf, err := readModFile(filepath.Join(root, filepath.FromSlash(dir), "go.mod"))
		if err != nil {
			return nil, err
		}
		mods = append(mods, Module{Dir: dir, Path: mf.Module.Mod.Path})
	}
	if len(mods) == 0 {
		return nil, errors.New("release: go.work uses no module")
	}
	return mods, nil
}

func readModFile(name string) (*modfile.File, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	mf, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	if mf.Module == nil {
		return nil, fmt.Errorf("release: %s has no module line", name)
	}
	return mf, nil
}

// Rewrite returns the go.mod files of the modules under root whose sibling
// requirements are not all at version, rewritten so that they are, keyed
// by the module's Dir. Nothing is written.
func Rewrite(root string, mods []Module, version string) (map[string][]byte, error) {
	siblings := make(map[string]bool, len(mods))
	for _, m := range mods {
		siblings[m.Path] = true
	}
	return editModFiles(root, mods, func(_ Module, mf *modfile.File) (bool, error) {
		dirty := false
		for _, r := range mf.Require {
			if siblings[r.Mod.Path] && r.Mod.Version != version {
				if err := mf.AddRequire(r.Mod.Path, version); err != nil {
					return false, err
				}
				dirty = true
			}
		}
		return dirty, nil
	})
}

// editModFiles runs edit over the go.mod of every module of mods under
// root and returns those it changed (edit reports true), formatted, keyed
// by the module's Dir. Nothing is written.
func editModFiles(root string, mods []Module, edit func(m Module, mf *modfile.File) (bool, error)) (map[string][]byte, error) {
	changed := map[string][]byte{}
	for _, m := range mods {
		name := filepath.Join(root, filepath.FromSlash(m.Dir), "go.mod")
		mf, err := readModFile(name)
		if err != nil {
			return nil, err
		}
		dirty, err := edit(m, mf)
		if err != nil {
			return nil, fmt.Errorf("release: %s: %w", name, err)
		}
		if !dirty {
			continue
		}
		mf.Cleanup()
		data, err := mf.Format()
		if err != nil {
			return nil, fmt.Errorf("release: %s: %w", name, err)
		}
		changed[m.Dir] = data
	}
	return changed, nil
}

// dropReplaces returns data, a go.mod, without its replace directives: what
// the go command reads of a module that is not the main module.
func dropReplaces(data []byte) ([]byte, error) {
	mf, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return nil, err
	}
	for _, r := range slices.Clone(mf.Replace) {
		if err := mf.DropReplace(r.Old.Path, r.Old.Version); err != nil {
			return nil, err
		}
	}
	mf.Cleanup()
	return mf.Format()
}

// Crosslink returns the go.mod files of the modules under root that lack a
// replace directive to the folder of a sibling, with those directives
// added, keyed by the module's Dir. With them, `go mod tidy` works inside
// one module with GOWORK=off although no sibling version is published
// yet; the go command ignores them in a dependency. A sibling requirement
// at the version `go mod tidy` writes for a replaced module (v0.0.0-...)
// is set to the highest version the other sibling requirements name.
// Nothing is written.
func Crosslink(root string, mods []Module) (map[string][]byte, error) {
	siblings := map[string]bool{}
	for _, m := range mods {
		siblings[m.Path] = true
	}
	current := ""
	for _, m := range mods {
		mf, err := readModFile(filepath.Join(root, filepath.FromSlash(m.Dir), "go.mod"))
		if err != nil {
			return nil, err
		}
		for _, r := range mf.Require {
			if siblings[r.Mod.Path] && !module.IsPseudoVersion(r.Mod.Version) && semver.Compare(r.Mod.Version, current) > 0 {
				current = r.Mod.Version
			}
		}
	}
	return editModFiles(root, mods, func(m Module, mf *modfile.File) (bool, error) {
		have := map[string]bool{}
		for _, r := range mf.Replace {
			have[r.Old.Path] = true
		}
		dirty := false
		for _, r := range mf.Require {
			if siblings[r.Mod.Path] && module.IsPseudoVersion(r.Mod.Version) && current != "" {
				if err := mf.AddRequire(r.Mod.Path, current); err != nil {
					return false, err
				}
				dirty = true
			}
		}
		for _, s := range mods {
			if s.Path == m.Path || have[s.Path] {
				continue
			}
			rel, err := filepath.Rel(filepath.FromSlash(m.Dir), filepath.FromSlash(s.Dir))
			if err != nil {
				return false, err
			}
			rel = filepath.ToSlash(rel)
			if !strings.HasPrefix(rel, "../") {
				rel = "./" + rel // a replacement without a version must be a path
			}
			if err := mf.AddReplace(s.Path, "", rel, ""); err != nil {
				return false, err
			}
			dirty = true
		}
		return dirty, nil
	})
}

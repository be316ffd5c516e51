package main

import (
	"bufio"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
)

// ErrgroupPath is the one package outside the standard library a program may import.
const errgroupPath = "golang.org/x/sync/errgroup"

// One importer for the process: export data is loaded once per package and shared by every
// check. Import paths are unique across tool sets (the bindings' path carries a digest), so
// one path→file table can serve them all.
var (
	mu       sync.Mutex
	files    = map[string]string{} // import path -> export data file ("" when known but not built yet)
	loaded   = map[string]bool{}   // importcfg files already read
	byName   map[string][]string   // package name -> importable paths (standard library + errgroup)
	fset     = token.NewFileSet()
	imp      types.Importer
	probeErr = map[string]bool{}
)

func init() { imp = newImporter() }

func newImporter() types.Importer {
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		name, ok := files[path]
		if !ok || name == "" {
			return nil, os.ErrNotExist
		}
		return os.Open(name)
	})
}

// loadImportcfg merges an importcfg's "packagefile path=file" lines into the table.
func loadImportcfg(path string) bool {
	if path == "" {
		return false
	}
	mu.Lock()
	defer mu.Unlock()
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false
	}
	// Keyed by size and time too: a tool set's importcfg is rewritten after the build cache
	// was trimmed, and then names other export files.
	key := fmt.Sprintf("%s\x00%d\x00%d", path, st.Size(), st.ModTime().UnixNano())
	if loaded[key] {
		return true
	}
	changed := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "packagefile ")
		if !ok {
			continue
		}
		if p, file, ok := strings.Cut(rest, "="); ok {
			if old, seen := files[p]; seen && old != file {
				changed = true
			}
			files[p] = file
		}
	}
	if len(loaded) > 0 && changed {
		// Export files moved: packages loaded from the old ones must not be reused.
		imp = newImporter()
		probeErr = map[string]bool{}
	}
	loaded[key] = true
	byName = nil
	return true
}

// loadKnown adds the import paths listed in a file (one per line) as importable although no
// export data is listed for them yet: the standard library while it is still being compiled.
func loadKnown(path string) {
	if path == "" {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	key := "known\x00" + path
	if loaded[key] {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	for _, p := range strings.Fields(string(data)) {
		if _, seen := files[p]; !seen {
			files[p] = ""
			byName = nil
		}
	}
	loaded[key] = true
}

// importable reports whether a program may import path.
func importable(path string) bool {
	if path == errgroupPath {
		return true
	}
	first, _, _ := strings.Cut(path, "/")
	if strings.Contains(first, ".") || path == "main" || path == "unsafe" {
		return path == "unsafe"
	}
	for _, part := range strings.Split(path, "/") {
		if part == "internal" || part == "vendor" {
			return false
		}
	}
	if strings.HasPrefix(path, "gocodews/") || strings.HasPrefix(path, "cmd/") {
		return false
	}
	_, ok := files[path]
	return ok
}

// defaultName is the package name an import path gets without an alias.
func defaultName(path string) string {
	parts := strings.Split(path, "/")
	last := parts[len(parts)-1]
	if len(parts) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		return parts[len(parts)-2]
	}
	return last
}

func names() map[string][]string {
	if byName != nil {
		return byName
	}
	byName = map[string][]string{}
	for p := range files {
		if importable(p) && p != "unsafe" {
			n := defaultName(p)
			byName[n] = append(byName[n], p)
		}
	}
	for _, ps := range byName {
		sort.Slice(ps, func(i, j int) bool {
			if len(ps[i]) != len(ps[j]) {
				return len(ps[i]) < len(ps[j])
			}
			return ps[i] < ps[j]
		})
	}
	return byName
}

// preferred breaks ties the way programs usually mean them.
var preferred = map[string]string{
	"template": "text/template",
	"scanner":  "text/scanner",
	"pprof":    "runtime/pprof",
}

// resolve picks the package for name whose exported symbols cover sels (goimports' rule),
// preferring the package that exports most of them, then a known preference, then the
// shortest path. ok is false when no importable package has that name.
func resolve(name string, sels []string) (string, bool) {
	mu.Lock()
	defer mu.Unlock()
	cands := names()[name]
	if len(cands) == 0 {
		return "", false
	}
	if len(cands) == 1 {
		return cands[0], true
	}
	if name == "rand" && onlyCrypto(sels) {
		return "crypto/rand", true // math/rand's Read is deprecated; code calling it means crypto
	}
	best, bestScore := "", -1
	for _, c := range cands {
		score := 0
		if pkg := load(c); pkg != nil {
			for _, s := range sels {
				if obj := pkg.Scope().Lookup(s); obj != nil && obj.Exported() {
					score += 2
				}
			}
		}
		if preferred[name] == c {
			score++
		}
		if score > bestScore {
			best, bestScore = c, score
		}
	}
	return best, true
}

// load imports a package's export data; callers hold mu.
func load(path string) *types.Package {
	if probeErr[path] {
		return nil
	}
	pkg, err := imp.Import(path)
	if err != nil {
		probeErr[path] = true
		return nil
	}
	return pkg
}

// lockedImporter serialises the shared importer for go/types.
type lockedImporter struct{}

func (lockedImporter) Import(path string) (*types.Package, error) {
	mu.Lock()
	defer mu.Unlock()
	return imp.Import(path)
}

func onlyCrypto(sels []string) bool {
	for _, s := range sels {
		switch s {
		case "Read", "Reader", "Prime", "Text":
		default:
			return false
		}
	}
	return true
}

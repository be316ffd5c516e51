"""The commonly used standard-library packages.

Warm-up compiles them ahead of time, tool functions never shadow their names, and the import
fixer adds them on use (any standard-library package can be used; these are the common ones).
"""

from __future__ import annotations

# package name -> (import path, guard declaration). The guard uses the package so an
# import added on a false positive still compiles.
STDLIB: dict[str, tuple[str, str]] = {
    "fmt": ("fmt", "var _ = fmt.Sprint"),
    "strings": ("strings", "var _ = strings.Contains"),
    "strconv": ("strconv", "var _ = strconv.Itoa"),
    "errors": ("errors", "var _ = errors.New"),
    "sort": ("sort", "var _ = sort.Ints"),
    "slices": ("slices", "var _ = slices.Contains[[]int]"),
    "maps": ("maps", "var _ = maps.Clone[map[int]int]"),
    "cmp": ("cmp", "var _ = cmp.Compare[int]"),
    "iter": ("iter", "var _ iter.Seq[int]"),
    "time": ("time", "var _ = time.Now"),
    "json": ("encoding/json", "var _ = json.Marshal"),
    "base64": ("encoding/base64", "var _ = base64.NewEncoding"),
    "hex": ("encoding/hex", "var _ = hex.EncodeToString"),
    "csv": ("encoding/csv", "var _ = csv.NewReader"),
    "xml": ("encoding/xml", "var _ = xml.Marshal"),
    "math": ("math", "var _ = math.Abs"),
    "rand": ("math/rand", "var _ = rand.Intn"),
    "big": ("math/big", "var _ = big.NewInt"),
    "os": ("os", "var _ = os.Getenv"),
    "exec": ("os/exec", "var _ = exec.Command"),
    "slog": ("log/slog", "var _ = slog.Info"),
    "io": ("io", "var _ = io.ReadAll"),
    "bufio": ("bufio", "var _ = bufio.NewReader"),
    "bytes": ("bytes", "var _ = bytes.NewBuffer"),
    "regexp": ("regexp", "var _ = regexp.MustCompile"),
    "sync": ("sync", "var _ = sync.NewCond"),
    "atomic": ("sync/atomic", "var _ = atomic.AddInt64"),
    "log": ("log", "var _ = log.Println"),
    "unicode": ("unicode", "var _ = unicode.IsLetter"),
    "utf8": ("unicode/utf8", "var _ = utf8.RuneLen"),
    "sha256": ("crypto/sha256", "var _ = sha256.Sum256"),
    "sha1": ("crypto/sha1", "var _ = sha1.Sum"),
    "md5": ("crypto/md5", "var _ = md5.Sum"),
    "url": ("net/url", "var _ = url.Parse"),
    "http": ("net/http", "var _ = http.Get"),
    "filepath": ("path/filepath", "var _ = filepath.Join"),
    "path": ("path", "var _ = path.Join"),
    "tabwriter": ("text/tabwriter", "var _ = tabwriter.NewWriter"),
    "template": ("text/template", "var _ = template.New"),
    "html": ("html", "var _ = html.EscapeString"),
    "heap": ("container/heap", "var _ = heap.Init"),
    "list": ("container/list", "var _ = list.New"),
    "reflect": ("reflect", "var _ = reflect.TypeOf"),
    "runtime": ("runtime", "var _ = runtime.NumCPU"),
    "gzip": ("compress/gzip", "var _ = gzip.NewReader"),
    "errgroup": ("golang.org/x/sync/errgroup", "var _ = errgroup.WithContext"),
    "mcp": ("github.com/modelcontextprotocol/go-sdk/mcp", "var _ = mcp.NewClient"),
}

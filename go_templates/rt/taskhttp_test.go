//go:build !gocode_loopback

package rt

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestValidVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"2025-11-25": true, "2026-07-28": true, "": false, "2025-11-2": false, "2025/11/25": false,
		"2025-11-25\r\nX-Evil: 1": false, "abcd-ef-gh": false,
	} {
		if got := validVersion(v); got != want {
			t.Errorf("validVersion(%q) = %v, want %v", v, got, want)
		}
	}
}

// The negotiated version goes on each request that names none; one the SDK set is kept, and a
// configured header still wins over both.
func TestVersionHeader(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get(protocolVersionHeader))
	}))
	defer srv.Close()
	client, transport := newHTTPClient(nil, false)
	send := func(version string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
		if version != "" {
			req.Header.Set(protocolVersionHeader, version)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	send("")
	transport.setVersion("2025-11-25")
	send("")
	send("2026-07-28")
	want := []string{"", "2025-11-25", "2026-07-28"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("versions sent %q, want %q", got, want)
	}
}

func TestSignInStatusHint(t *testing.T) {
	for _, tt := range []struct {
		signsIn bool
		code    int
		want    string
	}{
		{false, 401, "HTTP 401 Unauthorized: check the server's headers (its token) in the config"},
		{true, 401, "HTTP 401 Unauthorized: the OAuth sign-in gave no token the server takes"},
		{true, 403, "HTTP 403 Forbidden: the OAuth sign-in gave no token the server takes"},
		{true, 404, "HTTP 404 Not Found: check the server's url in the config"},
	} {
		_, transport := newHTTPClient(nil, tt.signsIn)
		transport.lastStatus.Store(int64(tt.code))
		if got := transport.statusHint(); !strings.HasPrefix(got, tt.want) {
			t.Errorf("signsIn %v, %d: hint %q, want it to start %q", tt.signsIn, tt.code, got, tt.want)
		}
	}
}

//go:build !gocode_loopback

package rt

import (
	"os"
	"strings"
)

// serverEnvPassed is the minimal base of this program's environment that a stdio server it
// starts gets, besides the config's env for that server: what the MCP SDKs pass by default,
// the locale, the timezone, the temporary directory and the paths of the machine's TLS trust. gocode's controller uses the same list
// (gocode/mcp/serverenv.py), so a server sees the same in every mode.
var serverEnvPassed = []string{
	"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER",
	"LANG", "LANGUAGE", "TZ", "TMPDIR",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
	"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PROCESSOR_ARCHITECTURE", "PROGRAMFILES",
	"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE",
}

// serverEnvPrefixes: variables passed by the start of their name.
var serverEnvPrefixes = []string{"LC_"}

// serverEnv is a stdio server's environment: the base of environ (KEY=value entries), then
// extra, which wins. A bash-exported function (a value starting with "()") is never passed.
func serverEnv(environ []string, extra map[string]string) []string {
	env := make([]string, 0, len(serverEnvPassed)+len(extra))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.HasPrefix(v, "()") || !passedToServer(k) {
			continue
		}
		if _, over := extra[k]; !over {
			env = append(env, kv)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

func passedToServer(name string) bool {
	for _, p := range serverEnvPassed {
		if name == p {
			return true
		}
	}
	for _, p := range serverEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// processEnv is this program's environment, for serverEnv.
func processEnv() []string { return os.Environ() }

//go:build gocode_loopback

package rt

import (
	"context"
	"errors"
)

// A program linked with the loopback runtime always has a controller, which answers its
// resources and prompts (resources.go asks it); these are only what its own sessions would do.
var errNoSessions = errors.New("this program has no sessions of its own: the controller answers for its servers")

func listFrom(context.Context, string) ([]Resource, error) { return nil, errNoSessions }

func readFrom(context.Context, string, string) ([]ResourceContents, error) { return nil, errNoSessions }

func promptFrom(context.Context, string, string, map[string]string) (Prompt, error) {
	return Prompt{}, errNoSessions
}

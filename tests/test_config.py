"""Config: CPE's format, strict where gocode owns the keys, one clear message per problem."""

from __future__ import annotations

import pytest

from gocode.config import load_config, parse_config
from gocode.errors import ConfigError

pytestmark = pytest.mark.fast

CPE_STYLE = """
version: "1.0"
mcpServers:
  weather:
    type: stdio
    command: python
    args: [-m, gocode.demo.server]
    env: {TOKEN: "${MY_TOKEN}"}
  remote:
    type: http
    url: https://example.test/mcp
    headers: {Authorization: "Bearer ${MY_TOKEN}"}
    timeout: 5
  legacy:
    type: sse
    url: "${SSE_URL:-http://127.0.0.1:9/sse}"
models:
  - ref: sonnet
    display_name: Claude Sonnet
    id: claude-sonnet-4-5
    type: anthropic
    codeMode:
      enabled: true
      excludedTools: [get_tiny_image, weather.get_city]
      timeout: 30
  - ref: plain
    codeMode: {enabled: false}
  - ref: inherits
defaults:
  model: sonnet
  timeout: 5m
  codeMode:
    enabled: true
    maxOutputBytes: 1000
"""


def test_cpe_style_config_loads_and_expands_env():
    cfg = parse_config(CPE_STYLE, "gocode.yaml", env={"MY_TOKEN": "s3cret"})
    assert cfg.mcp_servers["weather"].env == {"TOKEN": "s3cret"}
    assert cfg.mcp_servers["remote"].headers == {"Authorization": "Bearer s3cret"}
    assert cfg.mcp_servers["remote"].timeout == 5
    assert cfg.mcp_servers["legacy"].url == "http://127.0.0.1:9/sse"  # ${VAR:-default}
    assert cfg.code_mode_for("sonnet").excluded_tools == ("get_tiny_image", "weather.get_city")
    assert cfg.code_mode_for("sonnet").timeout == 30
    assert cfg.code_mode_for("plain").enabled is False
    # A model without codeMode gets the defaults whole; CPE does not merge the blocks.
    assert cfg.code_mode_for("inherits").max_output_bytes == 1000
    assert cfg.code_mode_for(None).excluded_tools == ("get_tiny_image", "weather.get_city")  # defaults.model


def test_json_config(tmp_path):
    p = tmp_path / "gocode.json"
    p.write_text('{"mcpServers": {"s": {"url": "http://127.0.0.1:1/mcp"}}}')
    cfg = load_config(p)
    assert cfg.mcp_servers["s"].type == "http"  # url without type means streamable HTTP


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mcpServers:\n  w:\n    comand: x\n", "mcpServers.w.comand: unknown key (known keys: args, auth, command,"),
        (
            "mcpServers:\n  w:\n    command: x\n    timeout: soon\n",
            "mcpServers.w.timeout: Input should be a valid number",
        ),
        ("models:\n  - ref: a\n    codeMode: {enabld: true}\n", "models[0].codeMode.enabld: unknown key"),
        ("mcpServer: {}\n", "mcpServer: unknown key (known keys: defaults, mcpServers, models"),
        ("mcpServers:\n  w:\n    type: http\n", "mcpServers.w: a `type: http` server needs `url`"),
        ("mcpServers:\n  w:\n    type: stdio\n", "mcpServers.w: a stdio server needs `command`"),
        ("mcpServers:\n  w:\n    command: x\n    url: http://a\n", "`url`/`headers`/`auth` are for `type: http|sse`"),
        ("mcpServers:\n  w:\n    type: sse\n    url: ftp://x\n", "`url` must start with http:// or https://"),
        ("mcpServers:\n  'bad name!':\n    command: x\n", "server name 'bad name!' must start with a letter"),
        ("mcpServers:\n  w:\n    command: x\n    headers: {A: '${NOPE}'}\n", "is not set"),
        (
            "mcpServers:\n  w:\n    command: x\n    env: {A: '${NOPE}'}\n",
            "mcpServers.w.env.A: environment variable NOPE is not set",
        ),
        ("models:\n  - ref: a\n  - ref: a\n", "model ref 'a' appears twice"),
        ("mcpServers: [1, 2]\n", "mcpServers: Input should be a valid dictionary"),
        ("- just a list\n", "the top level must be a mapping"),
        ("mcpServers: {w: {command: x\n", "not valid YAML"),
        (
            "defaults: {codeMode: {limits: {uidRange: '200000'}}}\n",
            "defaults.codeMode.limits.uidRange: uidRange '200000' must be START-END, two uids, e.g. 200000-200063",
        ),
        ("defaults: {codeMode: {limits: {uidRange: '0-63'}}}\n", "need 0 < START <= END < 4294967294 (uid 0 is root)"),
        ("defaults: {codeMode: {limits: {uidRange: '300-200'}}}\n", "need 0 < START <= END"),
        ("defaults: {codeMode: {limits: {uidRange: '65000-66000'}}}\n", "includes 65534 (nobody)"),
    ],
)
def test_bad_configs_name_the_file_and_key(text, expected):
    with pytest.raises(ConfigError) as info:
        parse_config(text, "gocode.yaml", env={})
    msg = str(info.value)
    assert msg.startswith("gocode.yaml"), msg
    assert expected in msg, msg
    assert "Traceback" not in msg


def test_unknown_model_ref():
    cfg = parse_config("models:\n  - ref: a\n  - ref: b\n", "g.yaml")
    with pytest.raises(ConfigError, match=r"g.yaml: unknown model ref 'zz' \(models: a, b\)"):
        cfg.code_mode_for("zz")


def test_missing_file_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"gocode.yaml: config file not found \(pass -c/--config PATH"):
        load_config()
    with pytest.raises(ConfigError, match=r"nope\.yaml: config file not found"):
        load_config(tmp_path / "nope.yaml")


def test_tool_filters_and_timeout_clamp():
    cfg = parse_config(
        "mcpServers:\n  a: {command: x, enabledTools: [t1]}\n  b: {command: x, disabledTools: [t2]}\n"
        "defaults:\n  codeMode: {timeout: 100, maxTimeout: 20}\n",
        "g.yaml",
    )
    assert cfg.mcp_servers["a"].allows("t1") and not cfg.mcp_servers["a"].allows("t2")
    assert cfg.mcp_servers["b"].allows("t1") and not cfg.mcp_servers["b"].allows("t2")
    assert cfg.code_mode_for(None).clamp_timeout(None) == 20
    assert cfg.code_mode_for(None).clamp_timeout(5) == 5


def test_uid_range_is_read_as_both_ends_included():
    cfg = parse_config("defaults: {codeMode: {limits: {uidRange: ' 200000 - 200063 '}}}\n", "gocode.yaml", env={})
    assert cfg.code_mode_for(None).limits.uids == range(200000, 200064)
    assert parse_config("{}", "gocode.yaml", env={}).code_mode_for(None).limits.uids == range(0x70000000, 0x70000400)


@pytest.mark.parametrize("key", ["codemode", "CodeMode", "code-mode", "apiKeyEnv", "baseUrl"])
def test_a_misspelt_gocode_key_under_models_is_an_error_naming_it(key):
    with pytest.raises(ConfigError, match=rf"models\[0\]\.{key}: unknown key; did you mean `"):
        parse_config(f"models:\n  - ref: a\n    {key}: x\n", "g.yaml")
    with pytest.raises(ConfigError, match=r"g\.yaml: defaults\.codemode: unknown key; did you mean `codeMode`\?"):
        parse_config("defaults:\n  codemode: {enabled: false}\n", "g.yaml")


def test_a_key_close_to_a_gocode_key_is_a_warning_and_the_agents_own_keys_are_kept(caplog):
    text = "models:\n  - ref: a\n    display_name: A\n    temperature: 0.2\n    codeMdoe: {enabled: false}\n"
    with caplog.at_level("WARNING", logger="gocode.config"):
        cfg = parse_config(text, "g.yaml")
    assert [r.getMessage() for r in caplog.records] == [
        "g.yaml: models[0].codeMdoe: not a gocode key (kept for your agent); did you mean `codeMode`?"
    ]
    assert cfg.models[0].code_mode is None  # the misspelt block did not apply


@pytest.mark.fast
def test_a_server_note_is_a_bounded_string():
    cfg = parse_config('mcpServers:\n  git:\n    command: x\n    note: "The repository at /src/app"\n', "g.yaml")
    assert cfg.mcp_servers["git"].note == "The repository at /src/app"
    assert parse_config("mcpServers:\n  git:\n    command: x\n", "g.yaml").mcp_servers["git"].note == ""
    for bad in ("note: 12", "note: [a]", f"note: {'x' * 2001}"):
        with pytest.raises(ConfigError, match="note"):
            parse_config(f"mcpServers:\n  git:\n    command: x\n    {bad}\n", "g.yaml")

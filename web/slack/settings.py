"""Slack credentials from environment variables, kept as secrets (their values never appear in logs or errors)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, SecretStr

BOT_TOKEN_VAR = "SLACK_BOT_TOKEN"
SIGNING_SECRET_VAR = "SLACK_SIGNING_SECRET"
APP_TOKEN_VAR = "SLACK_APP_TOKEN"
TABLES_VAR = "GPU_ADVISOR_SLACK_TABLES"
"""Set to 0 to render offers as fields instead of the native table block."""
API_URL_VAR = "GPU_ADVISOR_SLACK_API_URL"
"""Another base URL for Slack's Web API (a corporate proxy or gateway; a local stand-in in tests)."""


class SlackSettings(BaseModel):
    """The bot token, the signing secret (HTTP events) and the app-level token (Socket Mode)."""

    model_config = ConfigDict(frozen=True)

    bot_token: SecretStr
    signing_secret: SecretStr | None = None
    app_token: SecretStr | None = None
    tables: bool = True
    api_url: str | None = None


def _value(environ: Mapping[str, str], name: str) -> SecretStr | None:
    """A non-empty variable as a secret, else None."""
    value = (environ.get(name) or "").strip()
    return SecretStr(value) if value else None


def _check_prefix(secret: SecretStr | None, name: str, prefix: str) -> None:
    """ValueError (naming the variable, never its value) when a token does not look like one."""
    if secret is not None and not secret.get_secret_value().startswith(prefix):
        raise ValueError(f"{name} does not look like a Slack token (it should start with '{prefix}')")


def load_settings(*, socket_mode: bool, environ: Mapping[str, str] | None = None) -> SlackSettings:
    """Settings for HTTP events (bot token + signing secret) or Socket Mode (bot token + app token)."""
    env = os.environ if environ is None else environ
    bot, secret, app = _value(env, BOT_TOKEN_VAR), _value(env, SIGNING_SECRET_VAR), _value(env, APP_TOKEN_VAR)
    needed = [BOT_TOKEN_VAR, APP_TOKEN_VAR if socket_mode else SIGNING_SECRET_VAR]
    missing = [name for name, value in zip(needed, (bot, app if socket_mode else secret)) if value is None]
    if missing:
        raise ValueError(f"set {' and '.join(missing)} (see the Slack section of the README)")
    _check_prefix(bot, BOT_TOKEN_VAR, "xoxb-")
    _check_prefix(app, APP_TOKEN_VAR, "xapp-")
    tables = (env.get(TABLES_VAR) or "1").strip().lower() not in ("0", "false", "no", "off")
    api_url = (env.get(API_URL_VAR) or "").strip() or None
    if api_url is not None and not api_url.startswith(("https://", "http://")):
        raise ValueError(f"{API_URL_VAR} must be an http(s) URL")
    if api_url is not None and not api_url.endswith("/"):
        api_url += "/"
    return SlackSettings(
        bot_token=bot,
        signing_secret=secret,
        app_token=app,
        tables=tables,  # type: ignore[arg-type]
        api_url=api_url,
    )


def http_configured(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the variables for HTTP events (SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET) are set."""
    env = os.environ if environ is None else environ
    return bool((env.get(BOT_TOKEN_VAR) or "").strip() and (env.get(SIGNING_SECRET_VAR) or "").strip())

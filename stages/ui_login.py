"""The MLflow UI's login. `papers ui` serves MLflow's basic-auth app, whose one account is an admin named after
the OS user, with a random password generated on first use into mlflow/ui-password (0600, in the store's 0700
folder). Another local account reaches the port, but every page and API call except /health answers it 401,
and it cannot read the password.

Standard library only: `papers ui` reports a UI that already runs without importing MLflow.
"""
from __future__ import annotations

import os
import pwd
import secrets
from pathlib import Path

from tasks.core.private import replace_file, secret

PASSWORD = "ui-password"
CONFIG = "ui-auth.ini"  # MLflow's auth config (MLFLOW_AUTH_CONFIG_PATH), rewritten at each start
USERS = "ui-users.db"  # MLflow's user store: the admin, created from the environment at the first start


def username() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name


def how_to_log_in(store: Path, root: Path) -> str:
    # No http://user:password@host form: the UI's own fetch() calls refuse a page opened with one.
    return (f"MLflow UI login (your browser asks for it): user {username()}, password in "
            f"{(store / PASSWORD).relative_to(root)} (readable by you alone)")


def server_environment(store: Path) -> dict[str, str]:
    """What `mlflow ui --app-name basic-auth` needs for the store folder `store` (private): its config, the admin's
    name and password (passed by environment, so the password lies in one file only) and a CSRF key (MLflow
    requires one; only its sign-up form uses it, and a single worker needs none that outlives it)."""
    password = store / PASSWORD
    if not password.exists():  # lost, or never made: the admin of an existing user store has another one
        (store / USERS).unlink(missing_ok=True)
    config = store / CONFIG
    replace_file(config, ("[mlflow]\n"
                          "default_permission = NO_PERMISSIONS\n"  # an account other than the admin sees nothing either
                          f"database_uri = sqlite:///{(store / USERS).resolve()}\n").encode())
    return {"MLFLOW_AUTH_CONFIG_PATH": str(config), "MLFLOW_AUTH_ADMIN_USERNAME": username(),
            "MLFLOW_AUTH_ADMIN_PASSWORD": secret(password), "MLFLOW_FLASK_SERVER_SECRET_KEY": secrets.token_urlsafe(32)}

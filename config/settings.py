"""Django settings. Every value comes from the environment; nothing set means a local,
server-less setup (SQLite and a Celery broker kept in a SQLite file)."""
from __future__ import annotations

import os
import warnings
from datetime import timedelta
from pathlib import Path

import dj_database_url

from .client_address import proxy_count
from .env import env_bool, env_int, env_list, env_str
from .paths import default_var_dir, site_folder
from .remembered import allowed_networks
from .site_url import site_url

BASE_DIR = Path(__file__).resolve().parent.parent
# The test suite's parallel workers (pytest-xdist, `make test`) each keep their files (cache, SQLite) apart.
_TEST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
VAR_DIR = Path(env_str("HEDGELAB_VAR_DIR", str(default_var_dir() / (f"test-{_TEST_WORKER}" if _TEST_WORKER else ""))))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", default=True)
_DEV_KEY = "dev-only-insecure-key-set-SECRET_KEY-in-production"
SECRET_KEY = env_str("SECRET_KEY", _DEV_KEY if DEBUG else "")
if not SECRET_KEY:
    raise RuntimeError("SECRET_KEY must be set when DEBUG is off")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
# Salt for the hashed participant ids in exports; falls back to SECRET_KEY.
EXPORT_ID_SALT = env_str("EXPORT_ID_SALT", SECRET_KEY)
# The public address of the site; without SITE_URL, the one the last `make run` served on (config/site_url.py).
SITE_URL = site_url(env_str("SITE_URL"), VAR_DIR)
# Public reference data (manage.py fetch_data): the cache, and a mirror that replaces the public sources
# (<mirror>/<folder>/<file>; tests and CI serve ../shared/data on loopback). Checksums are pinned either way.
REFERENCE_DATA_DIR = Path(env_str("REFERENCE_DATA_DIR", str(VAR_DIR / "data")))
REFERENCE_DATA_MIRROR = env_str("REFERENCE_DATA_MIRROR")
# Environment variables a model endpoint may name as its API key, each bound to the hosts it may be sent to:
# NAME@HOST[:PORT] entries (NAME may be a shell pattern; PORT * for any); unset: OPENAI_API_KEY@api.openai.com
# (elicitation.key_env).
MODEL_API_KEY_VARS = env_list("MODEL_API_KEY_VARS")
# Loopback, private or link-local networks model endpoints may be reached at (addresses or CIDR networks, e.g.
# 127.0.0.0/8,::1 for the bundled local model); every other non-public address is refused (elicitation.destinations).
# Unset: those of the `make run` serving from VAR_DIR, while it runs (config/remembered.py).
MODEL_ENDPOINT_ALLOWED_NETWORKS = allowed_networks(env_str("MODEL_ENDPOINT_ALLOWED_NETWORKS"), VAR_DIR)
# Prolific's API (publishing studies, reviewing submissions): the token is read from the environment variable
# named here, never stored; PROLIFIC_API_URL is only changed for a test stub.
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com").rstrip("/")
PROLIFIC_TOKEN_ENV = env_str("PROLIFIC_TOKEN_ENV", "PROLIFIC_API_TOKEN")
PROLIFIC_TIMEOUT_SECONDS = float(env_str("PROLIFIC_TIMEOUT_SECONDS", "30"))
PROLIFIC_SYNC_SECONDS = env_int("PROLIFIC_SYNC_SECONDS", 300)
PROLIFIC_COMPLETE_URL = env_str("PROLIFIC_COMPLETE_URL", "https://app.prolific.com/submissions/complete")
# Reading Prolific's lists: rows per page (Prolific's default is 20) and a bound on pages; a 429 is retried
# PROLIFIC_MAX_RETRIES times, waiting PROLIFIC_BACKOFF_SECONDS × 2^try (or Retry-After), at most the max.
PROLIFIC_PAGE_SIZE = env_int("PROLIFIC_PAGE_SIZE", 20)
PROLIFIC_MAX_PAGES = env_int("PROLIFIC_MAX_PAGES", 2000)
PROLIFIC_MAX_RETRIES = env_int("PROLIFIC_MAX_RETRIES", 5)
PROLIFIC_BACKOFF_SECONDS = float(env_str("PROLIFIC_BACKOFF_SECONDS", "1"))
PROLIFIC_BACKOFF_MAX_SECONDS = float(env_str("PROLIFIC_BACKOFF_MAX_SECONDS", "60"))
# Publishing is refused below Prolific's minimum reward per hour, in the account's cents/pence: $8 = 800
# (default); a GBP workspace may set 600 (£6).
PROLIFIC_MIN_HOURLY_REWARD = env_int("PROLIFIC_MIN_HOURLY_REWARD", 800)
# A participant asked to return who has not returned after this many days (or 2 days before Prolific approves
# the submission on its own, 21 days after completion) gets the study's follow-up decision.
PROLIFIC_RETURN_WAIT_DAYS = float(env_str("PROLIFIC_RETURN_WAIT_DAYS", "7"))

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc served from here, not from a CDN
    "django_filters",  # the API lists' query filters (config/filters.py)
    "axes",  # admin login lockout (config/login_lockout.py)
    "surveys",
    "elicitation",
    "analysis",
    "prolific",
    "access",  # ownership and sharing (django-rules), the API token admin
]

MIDDLEWARE = [
    "surveys.outage.OutageMiddleware",  # outermost: retries a request once after a database outage
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.RejectNullCharactersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "surveys.outage.SessionMiddleware",  # Django's, with a database outage while saving treated as one
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # turns a login refused by the lockout into its 429 page
]
# django-axes checks the lockout before any password is checked.
# Object-level rules (access.ownership, django-rules) next to the model permissions of the admin.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "rules.permissions.ObjectPermissionBackend",
                           "django.contrib.auth.backends.ModelBackend"]

ROOT_URLCONF = "config.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [site_folder("templates")],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

# Persistent connections (a process keeps its connection for DB_CONN_MAX_AGE seconds; 0 closes it after each
# request), checked before reuse so that a database restart costs no error (DB_CONN_HEALTH_CHECKS).
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
        conn_max_age=env_int("DB_CONN_MAX_AGE", 600),
        conn_health_checks=env_bool("DB_CONN_HEALTH_CHECKS", default=True),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded database for a pilot: write-ahead log (readers never block the writer), transactions that
    # take the write lock when they begin (so two of them never deadlock upgrading a read lock, which SQLite
    # answers with an immediate "database is locked"), and a busy timeout: a writer waits for the lock.
    # synchronous=FULL: a committed answer survives a power cut, not only a crash.
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "timeout": env_int("SQLITE_BUSY_TIMEOUT", 30),
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
    })
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Django's cache: by default files in VAR_DIR/cache; CACHE_URL=redis://… for web processes on several machines.
# With Redis the entry cap counts there (surveys.entry_counter), otherwise in the database.
_CACHE_URL = env_str("CACHE_URL", "")
CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _CACHE_URL}
          if _CACHE_URL else {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                              "LOCATION": str(VAR_DIR / "cache")}}
# Reverse proxies in front of the web processes, each appending to X-Forwarded-For: the client address is the
# hop that many places from the right (config.client_address). 0: REMOTE_ADDR. TRUST_X_FORWARDED_FOR=1 is the
# deprecated spelling of 1.
TRUSTED_PROXY_COUNT = proxy_count(os.environ)
if os.environ.get("TRUST_X_FORWARDED_FOR", "").strip():
    warnings.warn("TRUST_X_FORWARDED_FOR is deprecated: set TRUSTED_PROXY_COUNT to the number of reverse proxies "
                  f"(read as TRUSTED_PROXY_COUNT={TRUSTED_PROXY_COUNT})", FutureWarning, stacklevel=1)
# Admin login (django-axes): after this many failures from one client address, or for one username from one
# address, wait this long.
# A definition uploaded over the web: its templates are checked in a child process with these limits
# (surveys/definition/template_check.py).
DEFINITION_CHECK_CPU_SECONDS = env_int("DEFINITION_CHECK_CPU_SECONDS", 20)
DEFINITION_CHECK_MEMORY_MB = env_int("DEFINITION_CHECK_MEMORY_MB", 1024)
LOGIN_MAX_FAILURES = env_int("LOGIN_MAX_FAILURES", 5)
LOGIN_LOCKOUT_SECONDS = env_int("LOGIN_LOCKOUT_SECONDS", 900)
AXES_FAILURE_LIMIT = LOGIN_MAX_FAILURES
AXES_COOLOFF_TIME = timedelta(seconds=LOGIN_LOCKOUT_SECONDS)
# Never by username alone (a stranger could lock anyone out): by address, and by (username, address).
AXES_LOCKOUT_PARAMETERS = ["ip_address", ["username", "ip_address"]]
AXES_CLIENT_IP_CALLABLE = "config.client_address.client_address"
AXES_LOCKOUT_CALLABLE = "config.login_lockout.lockout_response"
# A success clears nothing: with reset on success, anyone with an account could log in between guesses at
# another's password and start the address's count again. Failures count for the lockout's length.
AXES_RESET_ON_SUCCESS = False
AXES_VERBOSE = False  # no start-up banner in every command's output
# Database outages (surveys.outage): wait before the one retry; the calm page reloads after this many seconds.
OUTAGE_RETRY_DELAY = float(env_str("OUTAGE_RETRY_DELAY", "0.5"))
OUTAGE_REFRESH_SECONDS = env_int("OUTAGE_REFRESH_SECONDS", 5)
# Participant entry: at most this many NEW participants per client address and study in the window (0: off).
ENTRY_MAX_PER_CLIENT = env_int("ENTRY_MAX_PER_CLIENT", 30)
ENTRY_WINDOW_SECONDS = env_int("ENTRY_WINDOW_SECONDS", 600)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# The test suite (tests/conftest.py sets TEST_FAST_PASSWORD_HASHER=1, inherited by the servers it starts) hashes
# with MD5: PBKDF2's million rounds cost about 0.7 s for each of the ~250 users the tests create. Never set it in
# production; the default hashers stay in the list, so passwords hashed either way are checked.
if env_bool("TEST_FAST_PASSWORD_HASHER", False):
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher",
                        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
                        "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
                        "django.contrib.auth.hashers.Argon2PasswordHasher",
                        "django.contrib.auth.hashers.BCryptSHA256PasswordHasher",
                        "django.contrib.auth.hashers.ScryptPasswordHasher"]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
# Participant pages are translated (locale/<lang>/LC_MESSAGES/django.po, compiled .mo committed); the language is
# the study's (Study.language, activated by surveys.views), never the browser's Accept-Language.
LOCALE_PATHS = [site_folder("locale")]
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "staticfiles")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns on every request when it is missing
STATICFILES_DIRS = [site_folder("static")]
# Static files are served by WhiteNoise, also with DEBUG off: hashed, compressed copies from STATIC_ROOT once
# `collectstatic` has run (`make run` and the Procfile's release do), the apps' own files before that
# (config.static_storage), so a production-mode server never answers 500 for want of a manifest.
WHITENOISE_USE_FINDERS = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "config.static_storage.ManifestOrPlainStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
MEDIA_ROOT = VAR_DIR / "media"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # staff AND the model permission the admin asks for the same action (config/permissions.py)
    "DEFAULT_PERMISSION_CLASSES": ["config.permissions.StaffModelPermission"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "config.pagination.ApiPagination",  # ?limit= up to 5000
    # ?study=, ?status=, … of the lists: each viewset's filterset_class (config/filters.py)
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "PAGE_SIZE": 500,
    # JSON with bounded nesting (config/json_input.py): too deep is a 400, not a RecursionError
    "DEFAULT_PARSER_CLASSES": ["config.json_input.JSONParser", "rest_framework.parsers.FormParser",
                               "rest_framework.parsers.MultiPartParser"],
}

# OpenAPI 3 schema (/api/schema/) and its documentation pages (/api/docs/, /api/redoc/), from the code.
SPECTACULAR_SETTINGS = {
    "TITLE": "hedgelab API",
    "DESCRIPTION": "Studies, items, participants, model runs, reports and exports. Authenticate with "
                   "`Authorization: Token <key>` (admin › Auth Token › Tokens) as a staff user; each action "
                   "needs the model permission the admin asks for it.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "config.schema.add_error_responses"],
    "ENUM_NAME_OVERRIDES": {
        "StudyStatusEnum": "surveys.models.Study.Status",
        "ParticipantStatusEnum": "surveys.models.Participant.Status",
        "RunStatusEnum": "elicitation.models.ElicitationRun.Status",
        "ModelResponseStatusEnum": "elicitation.models.ModelResponse.Status",
        "RunModeEnum": "elicitation.models.ElicitationRun.Mode",
        "RefinementModeEnum": "elicitation.refine_request.MODES",
    },
}

# Celery: with no CELERY_BROKER_URL the broker is a SQLite file (kombu's SQLAlchemy transport),
# so `make run` needs no server. Set CELERY_BROKER_URL=redis://... or amqp://... to scale out.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", f"sqla+sqlite:///{VAR_DIR / 'broker.sqlite3'}")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", "") or None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # An unacknowledged task (its worker died) is redelivered after this many seconds.
    CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] = env_int("CELERY_VISIBILITY_TIMEOUT", 600)

# Per-endpoint concurrency and rate limits of the elicitation workers (elicitation/throttle.py): in Redis when
# there is one (ELICITATION_LIMITS_URL, else a Redis broker's URL): one round trip per request instead of
# database statements; "database" keeps them in the database (the default without Redis).
ELICITATION_LIMITS_URL = env_str("ELICITATION_LIMITS_URL", "") or (
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else "database")
if ELICITATION_LIMITS_URL != "database" and not ELICITATION_LIMITS_URL.startswith(("redis://", "rediss://", "unix://")):
    raise ValueError(f"ELICITATION_LIMITS_URL={ELICITATION_LIMITS_URL!r}: expected 'database' or a redis:// URL")

# Periodic tasks (run by `celery -A config beat`): the Prolific synchronisation has its own entry.
CELERY_BEAT_SCHEDULE = globals().get("CELERY_BEAT_SCHEDULE", {})
CELERY_BEAT_SCHEDULE["prolific-sync"] = {"task": "prolific.sync_all", "schedule": float(PROLIFIC_SYNC_SECONDS)}
# Elicitation runs heal themselves: re-queue the work no queued task will do (elicitation/sweep.py).
CELERY_BEAT_SCHEDULE["elicitation-sweep"] = {"task": "elicitation.sweep",
                                             "schedule": float(env_str("ELICITATION_SWEEP_SECONDS", "60")),
                                             "options": {"queue": env_str("ELICITATION_QUEUE", "celery")}}

# Production hardening: all on when DEBUG is off (`manage.py check --deploy` is then clean).
if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # the proxy's health check may speak plain HTTP
    # HTTPS-only cookies; turn off only where plain HTTP is the whole path (the scale-out test on loopback)
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", default=True)
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=True)
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # one line per HTTP request to a model endpoint would drown the progress bars and worker logs
    # (openai's HTTP layer logs as "httpx2" from openai 3 on, "httpx" before)
    "loggers": {name: {"level": env_str("HTTPX_LOG_LEVEL", "WARNING")} for name in ("httpx", "httpx2")},
}

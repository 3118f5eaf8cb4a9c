"""Pagination of every API list: ``?limit=`` and ``?offset=`` (DRF's LimitOffsetPagination) with a ceiling.

Without one, ``?limit=99999999999999999999`` reached the database as a number it cannot hold (HTTP 500 on
SQLite and PostgreSQL); a larger limit now gives :data:`MAX_LIMIT` rows, as DRF's ``max_limit`` does (an offset past the end gives
an empty page before any query).
"""
from __future__ import annotations

from rest_framework.pagination import LimitOffsetPagination

#: Most rows one page gives (``?limit=`` above it is lowered to it); the default page is PAGE_SIZE (500).
MAX_LIMIT = 5000


class ApiPagination(LimitOffsetPagination):
    max_limit = MAX_LIMIT

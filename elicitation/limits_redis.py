"""Per-endpoint concurrency and rate limits kept in Redis: the same leases and token buckets as
``elicitation.throttle``'s database rows, each taken or returned in one round trip to Redis (a Lua script,
atomic) instead of database statements.

- Slots: one hash per endpoint, field = slot index, value = "holder expiry-ms". A script leases the first
  free or expired slot from a random start; the holder renews or releases only its own slot.
- Rate: one hash per endpoint and kind (level, updated-ms), refilled at per_minute / 60 per second up to a
  capacity of one second's worth (at least the amount asked), as the database bucket.

Times are Redis's own clock (``TIME``), so the workers' clocks do not matter. Keys carry the endpoint's id
and creation time (a new endpoint never inherits an old one's leases, e.g. in a reused test database) and
expire after their last lease, so nothing is left behind. If Redis restarts without persistence, the leases
are forgotten: the requests in flight finish, and the limit holds again for the next ones.
"""
from __future__ import annotations

import random
from typing import Any

from .models import ModelEndpoint

_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local count, start, owner, lease = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
for offset = 0, count - 1 do
  local index = (start + offset) % count
  local held = redis.call('HGET', KEYS[1], index)
  local free = not held
  if held then
    local until_ms = tonumber(string.match(held, ' (%d+)$'))
    free = (until_ms == nil) or (until_ms < now)
  end
  if free then
    redis.call('HSET', KEYS[1], index, owner .. ' ' .. (now + lease))
    if redis.call('PTTL', KEYS[1]) < lease * 2 then redis.call('PEXPIRE', KEYS[1], lease * 2) end
    return index
  end
end
return -1
"""

_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held and string.match(held, '^(.*) %d+$') == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. (now + tonumber(ARGV[3])))
  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) * 2 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2) end
  return 1
end
return 0
"""

_RELEASE = """
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held and string.match(held, '^(.*) %d+$') == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return 1
end
return 0
"""

_HOLDERS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local count, live = tonumber(ARGV[1]), {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local holder, until_ms = string.match(all[i + 1], '^(.*) (%d+)$')
  if tonumber(all[i]) < count and until_ms and tonumber(until_ms) >= now then table.insert(live, holder) end
end
return live
"""

_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local amount, rate = tonumber(ARGV[1]), tonumber(ARGV[2])
local capacity = math.max(amount, rate, 1)
local level = tonumber(redis.call('HGET', KEYS[1], 'level'))
local updated = tonumber(redis.call('HGET', KEYS[1], 'updated'))
if level == nil or updated == nil then level, updated = capacity, now end
level = math.min(capacity, level + math.max(0, now - updated) * rate)
local wait = 0
if level >= amount then level = level - amount else wait = (amount - level) / rate end
redis.call('HSET', KEYS[1], 'level', tostring(level), 'updated', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(capacity / rate) + 60)
return tostring(wait)
"""


class RedisLimits:
    """Slots and rate buckets of every endpoint in one Redis database (``url``)."""

    def __init__(self, url: str, prefix: str = "hedgelab:limits:") -> None:
        import redis

        self.redis = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5,
                                          health_check_interval=30)
        self.prefix = prefix
        self._acquire = self.redis.register_script(_ACQUIRE)
        self._renew = self.redis.register_script(_RENEW)
        self._release = self.redis.register_script(_RELEASE)
        self._holders = self.redis.register_script(_HOLDERS)
        self._take = self.redis.register_script(_TAKE)

    def _key(self, what: str, endpoint: ModelEndpoint, *more: str) -> str:
        born = int(endpoint.created_at.timestamp() * 1_000_000) if endpoint.created_at else 0
        return ":".join([f"{self.prefix}{what}", str(endpoint.pk), str(born), *more])

    def try_acquire_slot(self, endpoint: ModelEndpoint, owner: str, lease_seconds: float) -> int | None:
        count = max(1, endpoint.max_concurrency)
        index = int(self._acquire(keys=[self._key("slots", endpoint)],
                                  args=[count, random.randrange(count), owner, int(lease_seconds * 1000)]))
        return None if index < 0 else index

    def renew_slot(self, endpoint: ModelEndpoint, index: int, owner: str, lease_seconds: float) -> None:
        self._renew(keys=[self._key("slots", endpoint)], args=[index, owner, int(lease_seconds * 1000)])

    def release_slot(self, endpoint: ModelEndpoint, index: int, owner: str) -> None:
        self._release(keys=[self._key("slots", endpoint)], args=[index, owner])

    def holders(self, endpoint: ModelEndpoint) -> set[str]:
        """Who holds a live slot lease."""
        live = self._holders(keys=[self._key("slots", endpoint)], args=[max(1, endpoint.max_concurrency)])
        return {h.decode() for h in live}

    def release_all(self, owner: str) -> None:
        """Free every slot ``owner`` holds, on any endpoint (after the task lost its database)."""
        for key in self.redis.scan_iter(match=f"{self.prefix}slots:*", count=500):
            for index, held in self.redis.hgetall(key).items():
                if held.decode().rsplit(" ", 1)[0] == owner:
                    self._release(keys=[key], args=[int(index), owner])

    def try_take(self, endpoint: ModelEndpoint, kind: str, amount: float, per_minute: float) -> float:
        return float(self._take(keys=[self._key("rate", endpoint, kind)], args=[amount, per_minute / 60.0]))

    def forget(self, endpoint: ModelEndpoint) -> Any:
        """Drop the endpoint's slots and buckets (tests)."""
        return self.redis.delete(*(self._key(w, endpoint, *k) for w, k in
                                   (("slots", ()), ("rate", ("requests",)), ("rate", ("tokens",)))))

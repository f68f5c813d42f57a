package dev.sheetd.client

/** A bounded map that drops the least recently used entry first; [limit] 0 keeps nothing. Thread-safe. */
class LruCache<K, V>(val limit: Int) {
    private val map = object : LinkedHashMap<K, V>(16, 0.75f, true) {
        override fun removeEldestEntry(eldest: MutableMap.MutableEntry<K, V>?) = size > limit
    }

    /** The value for [key], marking it most recently used. */
    @Synchronized fun get(key: K): V? = map[key]

    @Synchronized fun put(key: K, value: V) {
        if (limit > 0) map[key] = value
    }

    @Synchronized fun remove(key: K) { map.remove(key) }
    @Synchronized fun clear() = map.clear()
    @Synchronized fun keys(): List<K> = map.keys.toList()
    val size: Int @Synchronized get() = map.size
}

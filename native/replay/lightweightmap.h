// LightWeightMap<K,V> and DenseLightWeightMap<V> (superpmi-shared/lightweightmap.h): the recorded maps.
// Keys are kept sorted with memcmp over their raw bytes and found by binary search with the same memcmp
// (docs/mch-format.md 3). Serialised form: [LWM1] numItems [bufferLength keys items buffer]; dense maps
// DWM1 numItems [bufferLength items buffer], or an old untagged keyed map with keys 0..n-1 (section 4).
#ifndef _LightWeightMap
#define _LightWeightMap

#include "logging.h"
#include "spmiutil/errorhandling.h"
#include "spmiutil/spmiutil.h"

class LightWeightMapBuffer
{
public:
    LightWeightMapBuffer() : buffer(nullptr), bufferLength(0), maxBufferLength(0), locked(false) {}
    ~LightWeightMapBuffer() { delete[] buffer; }
    LightWeightMapBuffer(const LightWeightMapBuffer&) = delete;
    LightWeightMapBuffer& operator=(const LightWeightMapBuffer&) = delete;

    // Appends [u32 len][bytes] and returns the offset of the bytes; identical blobs are shared.
    unsigned int AddBuffer(const unsigned char* buff, unsigned int len)
    {
        if (buff == nullptr || len == 0)
            return (unsigned int)-1;
        int index = Contains(buff, len);
        if (index != -1)
            return (unsigned int)index;
        unsigned int need = bufferLength + (unsigned int)sizeof(unsigned int) + len;
        if (need > maxBufferLength)
        {
            unsigned int   newMax = need * 2 > 64 ? need * 2 : 64;
            unsigned char* nb     = new unsigned char[newMax];
            if (bufferLength > 0)
                memcpy(nb, buffer, bufferLength);
            delete[] buffer;
            buffer          = nb;
            maxBufferLength = newMax;
        }
        memcpy(buffer + bufferLength, &len, sizeof(unsigned int));
        unsigned int offset = bufferLength + (unsigned int)sizeof(unsigned int);
        memcpy(buffer + offset, buff, len);
        bufferLength = offset + len;
        return offset;
    }

    const unsigned char* GetBuffer(unsigned int offset)
    {
        if (offset == (unsigned int)-1)
            return nullptr;
        AssertCodeMsg(offset < bufferLength, EXCEPTIONCODE_LWM, "Hit offset bigger than bufferLength %u >= %u", offset,
                      bufferLength);
        return &buffer[offset];
    }

    // A blob whose data must be at least `len` bytes (the u32 length before it says how long it is).
    const unsigned char* GetBuffer(unsigned int offset, unsigned int len)
    {
        if (offset == (unsigned int)-1)
            return nullptr;
        AssertCodeMsg((offset >= sizeof(unsigned int)) && (offset <= bufferLength) &&
                          (len <= BlobLength(offset)) && (len <= bufferLength - offset),
                      EXCEPTIONCODE_LWM, "Blob at offset %u of %u bytes runs past bufferLength %u", offset, len,
                      bufferLength);
        return &buffer[offset];
    }

    // Length prefix of the blob at `offset` (0 if there is no room for one).
    unsigned int BlobLength(unsigned int offset)
    {
        if (offset < sizeof(unsigned int) || offset > bufferLength)
            return 0;
        unsigned int len;
        memcpy(&len, buffer + offset - sizeof(unsigned int), sizeof(unsigned int));
        return len;
    }

    // Offset of a blob with exactly these bytes, or -1.
    int Contains(const unsigned char* buff, unsigned int len)
    {
        unsigned int pos = 0;
        while (pos + sizeof(unsigned int) <= bufferLength)
        {
            unsigned int blen;
            memcpy(&blen, buffer + pos, sizeof(unsigned int));
            pos += (unsigned int)sizeof(unsigned int);
            if (blen > bufferLength - pos)
                break;
            if (blen == len && memcmp(buffer + pos, buff, len) == 0)
                return (int)pos;
            pos += blen;
        }
        return -1;
    }

    void Unlock() { locked = false; }
    void Lock() { locked = true; }

protected:
    // Reads bufferLength bytes of side buffer from ptr.
    void ReadBuffer(const unsigned char* ptr, unsigned int len)
    {
        delete[] buffer;
        buffer          = len ? new unsigned char[len] : nullptr;
        bufferLength    = len;
        maxBufferLength = len;
        if (len)
            memcpy(buffer, ptr, len);
    }

    unsigned char* buffer;
    unsigned int   bufferLength;
    unsigned int   maxBufferLength;
    bool           locked;
};

template <typename _Key, typename _Item>
class LightWeightMap : public LightWeightMapBuffer
{
public:
    LightWeightMap() : numItems(0), maxItems(0), pKeys(nullptr), pItems(nullptr) {}
    ~LightWeightMap()
    {
        delete[] pKeys;
        delete[] pItems;
    }

    void ReadFromArray(const unsigned char* rawData, unsigned int size)
    {
        const unsigned char* ptr = rawData;
        unsigned int         remaining = size;
        if (remaining >= 4 && memcmp(ptr, "LWM1", 4) == 0)
        {
            ptr += 4;
            remaining -= 4;
        }
        AssertCodeMsg(remaining >= sizeof(unsigned int), EXCEPTIONCODE_LWM, "Ended with unexpected sizes %zx != %x",
                      (size_t)4, remaining);
        memcpy(&numItems, ptr, sizeof(unsigned int));
        ptr += sizeof(unsigned int);
        remaining -= (unsigned int)sizeof(unsigned int);
        maxItems = numItems;
        if (numItems > 0)
        {
            unsigned int len = 0;
            AssertCodeMsg(remaining >= sizeof(unsigned int), EXCEPTIONCODE_LWM,
                          "Ended with unexpected sizes %zx != %x", (size_t)4, remaining);
            memcpy(&len, ptr, sizeof(unsigned int));
            ptr += sizeof(unsigned int);
            remaining -= (unsigned int)sizeof(unsigned int);
            unsigned long long need = (unsigned long long)numItems * (sizeof(_Key) + sizeof(_Item)) + len;
            AssertCodeMsg(need == remaining, EXCEPTIONCODE_LWM, "Ended with unexpected sizes %zx != %x",
                          (size_t)need, remaining);
            pKeys  = new _Key[numItems];
            pItems = new _Item[numItems];
            memcpy((void*)pKeys, ptr, sizeof(_Key) * numItems);
            ptr += sizeof(_Key) * numItems;
            memcpy((void*)pItems, ptr, sizeof(_Item) * numItems);
            ptr += sizeof(_Item) * numItems;
            ReadBuffer(ptr, len);
        }
        else
        {
            AssertCodeMsg(remaining == 0, EXCEPTIONCODE_LWM, "Ended with unexpected sizes %zx != %x", (size_t)0,
                          remaining);
        }
        locked = true;
    }

    // Inserts keeping the memcmp order; the first value for a key wins.
    bool Add(_Key key, _Item item)
    {
        int insert = 0, first = 0, last = (int)numItems - 1;
        while (first <= last)
        {
            int mid = (first + last) / 2;
            int res = memcmp(&pKeys[mid], &key, sizeof(_Key));
            if (res == 0)
                return false;
            if (res < 0)
                first = mid + 1;
            else
                last = mid - 1;
        }
        insert = first;
        if (numItems == maxItems)
        {
            unsigned int newMax   = maxItems ? maxItems * 2 : 4;
            _Key*        newKeys  = new _Key[newMax];
            _Item*       newItems = new _Item[newMax];
            if (numItems)
            {
                memcpy((void*)newKeys, pKeys, sizeof(_Key) * numItems);
                memcpy((void*)newItems, pItems, sizeof(_Item) * numItems);
            }
            delete[] pKeys;
            delete[] pItems;
            pKeys    = newKeys;
            pItems   = newItems;
            maxItems = newMax;
        }
        memmove((void*)&pKeys[insert + 1], &pKeys[insert], sizeof(_Key) * (numItems - insert));
        memmove((void*)&pItems[insert + 1], &pItems[insert], sizeof(_Item) * (numItems - insert));
        memcpy((void*)&pKeys[insert], &key, sizeof(_Key));
        memcpy((void*)&pItems[insert], &item, sizeof(_Item));
        numItems++;
        return true;
    }

    int GetIndex(_Key key)
    {
        // 3.1's check (SPMI_REPLAY_ERA=3.1): a compiler that takes `this` as never null drops it (-O2: the
        // read of numItems below faults, SIGSEGV), while -O0 keeps it: MISSING, "There is no such LWM". One
        // source, crash or not by optimization level, as with the real 3.1 superpmi and superpmi_O0.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wtautological-undefined-compare"
#else
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnonnull-compare"  // the point: the compiler may take it as always true
#endif
        if (SpmiEra31())
            AssertCodeMsg(this != nullptr, EXCEPTIONCODE_MC, "\"There is no such LWM (in GetIndex)\"");
#if defined(__clang__)
#pragma clang diagnostic pop
#else
#pragma GCC diagnostic pop
#endif
        if (numItems == 0)
            return -1;

        // binary search with memcmp over the raw key bytes
        int first = 0;
        int last  = (int)numItems - 1;
        while (first <= last)
        {
            int mid = (first + last) / 2;
            int res = memcmp(&pKeys[mid], &key, sizeof(_Key));
            if (res < 0)
                first = mid + 1;
            else if (res > 0)
                last = mid - 1;
            else
                return mid;
        }
        return -1;
    }

    // Value for a key; throws superpmi's assertion exception if it is not there.
    _Item Get(_Key key)
    {
        int index = GetIndex(key);
        AssertMsg(index != -1, "Didn't find Item (in Get)");
        return pItems[index];
    }

    _Item GetItem(int index)
    {
        AssertCodeMsg(index >= 0 && (unsigned int)index < numItems, EXCEPTIONCODE_LWM, "Bad index %d", index);
        return pItems[index];
    }
    _Key GetKey(int index)
    {
        AssertCodeMsg(index >= 0 && (unsigned int)index < numItems, EXCEPTIONCODE_LWM, "Bad index %d", index);
        return pKeys[index];
    }
    unsigned int GetCount() { return numItems; }

private:
    unsigned int numItems;
    unsigned int maxItems;
    _Key*        pKeys;
    _Item*       pItems;
};

template <typename _Item>
class DenseLightWeightMap : public LightWeightMapBuffer
{
public:
    DenseLightWeightMap() : numItems(0), maxItems(0), pItems(nullptr) {}
    ~DenseLightWeightMap() { delete[] pItems; }

    void ReadFromArray(const unsigned char* rawData, unsigned int size)
    {
        const unsigned char* ptr       = rawData;
        unsigned int         remaining = size;
        bool                 tagged    = remaining >= 4 && memcmp(ptr, "DWM1", 4) == 0;
        if (tagged)
        {
            ptr += 4;
            remaining -= 4;
        }
        AssertCodeMsg(remaining >= sizeof(unsigned int), EXCEPTIONCODE_LWM, "Ended with unexpected sizes %zx != %x",
                      (size_t)4, remaining);
        memcpy(&numItems, ptr, sizeof(unsigned int));
        ptr += sizeof(unsigned int);
        remaining -= (unsigned int)sizeof(unsigned int);
        maxItems = numItems;
        if (numItems == 0)
        {
            AssertCodeMsg(remaining == 0, EXCEPTIONCODE_LWM, "Ended with unexpected sizes %zx != %x", (size_t)0,
                          remaining);
            return;
        }
        unsigned int len = 0;
        AssertCodeMsg(remaining >= sizeof(unsigned int), EXCEPTIONCODE_LWM, "Ended with unexpected sizes %zx != %x",
                      (size_t)4, remaining);
        memcpy(&len, ptr, sizeof(unsigned int));
        ptr += sizeof(unsigned int);
        remaining -= (unsigned int)sizeof(unsigned int);
        size_t keySize = tagged ? 0 : sizeof(DWORD);  // old untagged form: an LWM<DWORD, _Item>
        unsigned long long need = (unsigned long long)numItems * (keySize + sizeof(_Item)) + len;
        AssertCodeMsg(need == remaining, EXCEPTIONCODE_LWM, "Ended with unexpected sizes %zx != %x", (size_t)need,
                      remaining);
        pItems = new _Item[numItems];
        if (tagged)
        {
            memcpy((void*)pItems, ptr, sizeof(_Item) * numItems);
        }
        else
        {
            const unsigned char* keys  = ptr;
            const unsigned char* items = ptr + keySize * numItems;
            bool*                seen  = new bool[numItems]();
            for (unsigned int i = 0; i < numItems; i++)
            {
                DWORD key;
                memcpy(&key, keys + i * keySize, sizeof(DWORD));
                if (key >= numItems || seen[key])
                {
                    delete[] seen;
                    if (key >= numItems)
                        LogException(EXCEPTIONCODE_LWM, "Illegal key %u", key);
                    LogException(EXCEPTIONCODE_LWM, "Duplicate key %u", key);
                }
                seen[key] = true;
                memcpy((void*)&pItems[key], items + i * sizeof(_Item), sizeof(_Item));
            }
            delete[] seen;
        }
        ReadBuffer(ptr + (keySize + sizeof(_Item)) * numItems, len);
    }

    void Append(_Item item)
    {
        if (numItems == maxItems)
        {
            unsigned int newMax   = maxItems ? maxItems * 2 : 4;
            _Item*       newItems = new _Item[newMax];
            if (numItems)
                memcpy((void*)newItems, pItems, sizeof(_Item) * numItems);
            delete[] pItems;
            pItems   = newItems;
            maxItems = newMax;
        }
        pItems[numItems++] = item;
    }

    _Item Get(unsigned int index)
    {
        AssertMsg(index < numItems, "Didn't find Item (in Get)");
        return pItems[index];
    }
    unsigned int GetCount() { return numItems; }

private:
    unsigned int numItems;
    unsigned int maxItems;
    _Item*       pItems;
};

#endif

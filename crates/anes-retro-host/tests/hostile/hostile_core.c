/* A libretro core that hands the frontend what a careless or hostile core might, chosen by words in
 * its content (tests/hostile_core.rs builds and loads it):
 *   width0          pictures 0 pixels wide and 0 rows high, with a picture pointer
 *   hugepitch       a picture whose rows are 2^63 bytes apart
 *   audioflood      SIZE_MAX audio frames, twice a frame
 *   hugememory      retro_get_memory_size(SYSTEM_RAM) is 2^63
 *   hugemap         a memory descriptor 2^62 bytes long beside a sane one
 *   manymaps        2000 memory descriptors of one byte each
 *   remap           RAM allocated by retro_load_game and unmapped by retro_unload_game (its old
 *                   address made unreadable), as mGBA frees and reallocates its memory
 *   failreload      retro_load_game refuses the content the second time
 *   hwrender        asks for hardware rendering, logs why it cannot go on and refuses the content
 *   flakyserialize  retro_serialize fails on every second call
 *   runmap          declares another memory map (another block, "other") in its second frame
 * retro_run, retro_serialize and retro_get_memory_data called with no game loaded log a line
 * starting "BUG:". */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define EXPORT __attribute__((visibility("default")))

struct retro_game_info {
    const char *path;
    const void *data;
    size_t size;
    const char *meta;
};
struct retro_system_info {
    const char *library_name, *library_version, *valid_extensions;
    bool need_fullpath, block_extract;
};
struct retro_system_av_info {
    struct {
        unsigned base_width, base_height, max_width, max_height;
        float aspect_ratio;
    } geometry;
    struct {
        double fps, sample_rate;
    } timing;
};
typedef void (*retro_log_printf_t)(unsigned level, const char *fmt, ...);
struct retro_log_callback {
    retro_log_printf_t log;
};
struct retro_memory_descriptor {
    uint64_t flags;
    void *ptr;
    size_t offset, start, select, disconnect, len;
    const char *addrspace;
};
struct retro_memory_map {
    const struct retro_memory_descriptor *descriptors;
    unsigned num_descriptors;
};
typedef bool (*retro_environment_t)(unsigned cmd, void *data);
typedef void (*retro_video_refresh_t)(const void *data, unsigned width, unsigned height, size_t pitch);
typedef void (*retro_audio_sample_t)(int16_t left, int16_t right);
typedef size_t (*retro_audio_sample_batch_t)(const int16_t *data, size_t frames);
typedef void (*retro_input_poll_t)(void);
typedef int16_t (*retro_input_state_t)(unsigned port, unsigned device, unsigned index, unsigned id);

#define ENV_SET_PIXEL_FORMAT 10
#define ENV_SET_HW_RENDER 14
#define ENV_GET_LOG_INTERFACE 27
#define ENV_SET_MEMORY_MAPS (36 | 0x10000)
#define MEMDESC_SYSTEM_RAM (1 << 2)
#define MEMORY_SYSTEM_RAM 2
#define RAM_LEN 4096
#define MANY_MAPS 2000

static retro_environment_t environment;
static retro_video_refresh_t video;
static retro_audio_sample_batch_t audio_batch;
static retro_log_printf_t log_line;

static char words[256];
static bool loaded;
static unsigned loads;
static unsigned serializations;
static uint8_t static_ram[RAM_LEN];
static uint8_t other_ram[16];
static uint8_t *ram = static_ram;
static uint32_t frame;
static uint32_t picture[16 * 16];
static int16_t audio[64];
static struct retro_memory_descriptor many[MANY_MAPS];

static bool has(const char *word) { return strstr(words, word) != NULL; }

static void say(unsigned level, const char *text) {
    if (log_line)
        log_line(level, "%s\n", text);
}

EXPORT void retro_set_environment(retro_environment_t cb) {
    struct retro_log_callback log = {NULL};
    environment = cb;
    if (environment(ENV_GET_LOG_INTERFACE, &log))
        log_line = log.log;
}
EXPORT void retro_set_video_refresh(retro_video_refresh_t cb) { video = cb; }
EXPORT void retro_set_audio_sample(retro_audio_sample_t cb) { (void)cb; }
EXPORT void retro_set_audio_sample_batch(retro_audio_sample_batch_t cb) { audio_batch = cb; }
EXPORT void retro_set_input_poll(retro_input_poll_t cb) { (void)cb; }
EXPORT void retro_set_input_state(retro_input_state_t cb) { (void)cb; }
EXPORT void retro_init(void) {
    /* The library may stay mapped between two tests' loads: start afresh. */
    memset(words, 0, sizeof words);
    loaded = false;
    loads = 0;
    serializations = 0;
    ram = static_ram;
    frame = 0;
}
EXPORT void retro_deinit(void) {}
EXPORT unsigned retro_api_version(void) { return 1; }
EXPORT void retro_get_system_info(struct retro_system_info *info) {
    memset(info, 0, sizeof *info);
    info->library_name = "hostile core";
    info->library_version = "1.0";
    info->valid_extensions = "txt";
}
EXPORT void retro_get_system_av_info(struct retro_system_av_info *info) {
    memset(info, 0, sizeof *info);
    info->geometry.base_width = info->geometry.max_width = 16;
    info->geometry.base_height = info->geometry.max_height = 16;
    info->timing.fps = 60.0;
    info->timing.sample_rate = 32000.0;
}
EXPORT void retro_set_controller_port_device(unsigned port, unsigned device) { (void)port, (void)device; }

EXPORT bool retro_load_game(const struct retro_game_info *game) {
    static struct retro_memory_descriptor two[2];
    struct retro_memory_map map;
    size_t i, n;
    if (!game || !game->data)
        return false;
    n = game->size < sizeof words - 1 ? game->size : sizeof words - 1;
    memcpy(words, game->data, n);
    words[n] = 0;
    loads++;
    if (has("hwrender")) {
        uint8_t context[256] = {0};
        environment(ENV_SET_HW_RENDER, context);
        say(3, "hostile core: no hardware rendering context, cannot go on");
        return false;
    }
    if (has("failreload") && loads > 1) {
        say(3, "hostile core: refusing the content the second time");
        return false;
    }
    if (has("remap")) {
        ram = mmap(NULL, RAM_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (ram == MAP_FAILED)
            return false;
    } else {
        ram = static_ram;
    }
    memset(ram, 0, RAM_LEN);
    frame = 0;
    memset(two, 0, sizeof two);
    two[0].flags = MEMDESC_SYSTEM_RAM;
    two[0].ptr = ram;
    two[0].len = RAM_LEN;
    two[0].addrspace = "ram";
    map.descriptors = two;
    map.num_descriptors = 1;
    if (has("hugemap")) {
        two[1].flags = MEMDESC_SYSTEM_RAM;
        two[1].ptr = ram;
        two[1].start = 0x10000;
        two[1].len = (size_t)1 << 62;
        two[1].addrspace = "huge";
        map.num_descriptors = 2;
    }
    if (has("manymaps")) {
        for (i = 0; i < MANY_MAPS; i++) {
            memset(&many[i], 0, sizeof many[i]);
            many[i].flags = MEMDESC_SYSTEM_RAM;
            many[i].ptr = ram;
            many[i].offset = i % RAM_LEN;
            many[i].start = i;
            many[i].len = 1;
            many[i].addrspace = "byte";
        }
        map.descriptors = many;
        map.num_descriptors = MANY_MAPS;
    }
    environment(ENV_SET_MEMORY_MAPS, &map);
    loaded = true;
    return true;
}
EXPORT bool retro_load_game_special(unsigned type, const struct retro_game_info *info, size_t num) {
    (void)type, (void)info, (void)num;
    return false;
}
EXPORT void retro_unload_game(void) {
    if (has("remap") && ram != static_ram) {
        /* Unmapped, and the address kept unreadable, so a frontend still reading it faults. */
        munmap(ram, RAM_LEN);
        mmap(ram, RAM_LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        ram = static_ram;
    }
    loaded = false;
}
EXPORT unsigned retro_get_region(void) { return 0; }
EXPORT void retro_reset(void) {}

EXPORT void retro_run(void) {
    if (!loaded) {
        say(3, "BUG: retro_run with no game loaded");
        return;
    }
    frame++;
    if (has("runmap") && frame == 2) {
        static struct retro_memory_descriptor other;
        struct retro_memory_map map = {&other, 1};
        memset(&other, 0, sizeof other);
        other.flags = MEMDESC_SYSTEM_RAM;
        other.ptr = other_ram;
        other.len = sizeof other_ram;
        other.addrspace = "other";
        environment(ENV_SET_MEMORY_MAPS, &map);
    }
    other_ram[0] = (uint8_t)frame;
    ram[0] = (uint8_t)frame;
    ram[1] = (uint8_t)loads;
    memset(picture, (int)frame, sizeof picture);
    if (has("width0")) {
        video(picture, 0, 16, 0);
        video(picture, 16, 0, 64);
    } else if (has("hugepitch")) {
        video(picture, 4, 3, (size_t)1 << 63);
    } else {
        video(picture, 16, 16, 64);
    }
    if (has("audioflood")) {
        audio_batch(audio, SIZE_MAX);
        audio_batch(audio, SIZE_MAX);
    } else {
        audio_batch(audio, 32);
    }
}

EXPORT size_t retro_serialize_size(void) {
    if (!loaded)
        say(3, "BUG: retro_serialize_size with no game loaded");
    return 64;
}
EXPORT bool retro_serialize(void *data, size_t size) {
    if (!loaded) {
        say(3, "BUG: retro_serialize with no game loaded");
        return false;
    }
    if (size < 64)
        return false;
    serializations++;
    if (has("flakyserialize") && serializations % 2 == 0)
        return false;
    memset(data, 0, size);
    memcpy(data, &frame, sizeof frame);
    memcpy((uint8_t *)data + 4, ram, 60);
    return true;
}
EXPORT bool retro_unserialize(const void *data, size_t size) {
    if (!loaded) {
        say(3, "BUG: retro_unserialize with no game loaded");
        return false;
    }
    if (size < 64)
        return false;
    memcpy(&frame, data, sizeof frame);
    memcpy(ram, (const uint8_t *)data + 4, 60);
    return true;
}
EXPORT void *retro_get_memory_data(unsigned id) {
    if (!loaded)
        say(3, "BUG: retro_get_memory_data with no game loaded");
    return id == MEMORY_SYSTEM_RAM && loaded ? ram : NULL;
}
EXPORT size_t retro_get_memory_size(unsigned id) {
    if (id != MEMORY_SYSTEM_RAM)
        return 0;
    return has("hugememory") ? (size_t)1 << 63 : RAM_LEN;
}
EXPORT void retro_cheat_reset(void) {}
EXPORT void retro_cheat_set(unsigned index, bool enabled, const char *code) {
    (void)index, (void)enabled, (void)code;
}

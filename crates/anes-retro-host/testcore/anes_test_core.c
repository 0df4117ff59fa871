/* anes's libretro test core: a tiny deterministic machine (256 bytes of system RAM, 64 of save RAM,
 * a 64x48 XRGB8888 picture and 100 stereo audio frames per frame, all derived from its state and the
 * RetroPad) that the core option "anestest_fault" makes misbehave in one known way each, so the
 * savestate audit can be shown to catch each fault at the right check, at the right byte:
 *   timestamp  the serialized bytes carry a clock reading at STATE_TIMESTAMP_OFFSET (check 1);
 *   random     power-on RAM and the generator are seeded from the clock and the process id (check 2);
 *   leak       a process-wide count of retro_run calls, outside the state, is written to RAM $10
 *              every frame: a rewind does not rewind it (check 3);
 *   forget     a mode set at frame 10 is not serialized, and from frame 60 on decides RAM $20: a
 *              state loaded into a fresh instance continues with the power-on mode (check 4);
 *   grow       the serialized size grows by one byte every 60 frames (check 5);
 *   button     Select held sets a mode that is not serialized; while it is set, RAM $20 takes the
 *              frame count every frame: a fault only input reaches (check 4 fails only when Select
 *              was pressed before the state changed hands; the audit's --shrink finds that press);
 *   crash      the core aborts in its 100th frame: its worker dies, and the audit has no result;
 *   segv       the core writes through a null pointer in its 50th frame (SIGSEGV);
 *   exit       the core calls exit(3) in its 50th frame;
 *   hang       the core does not return from its 50th frame (it aborts after two minutes);
 *   stdout     the core prints to stdout at load and every frame (120 bytes a frame, flushed), as
 *              some cores do: the worker must keep its protocol away from the core's stdout.
 * Built twice by build.rs; build B (ANES_TEST_CORE_BUILD_B) also flips bit 0 of RAM $30 from frame
 * 200 on, a "regression" for the canary, and bit 0 of RAM $31 on every frame Select is held, one
 * only input reaches (for the shrinker).
 * Licence: MIT OR Apache-2.0, as the rest of anes. The libretro declarations below are written from
 * the API's documented layouts (libretro.h), only those this core uses. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

struct retro_system_info {
    const char *library_name, *library_version, *valid_extensions;
    bool need_fullpath, block_extract;
};
struct retro_game_geometry {
    unsigned base_width, base_height, max_width, max_height;
    float aspect_ratio;
};
struct retro_system_timing {
    double fps, sample_rate;
};
struct retro_system_av_info {
    struct retro_game_geometry geometry;
    struct retro_system_timing timing;
};
struct retro_game_info {
    const char *path;
    const void *data;
    size_t size;
    const char *meta;
};
struct retro_variable {
    const char *key, *value;
};
struct retro_core_option_value {
    const char *value, *label;
};
struct retro_core_option_definition {
    const char *key, *desc, *info;
    struct retro_core_option_value values[128];
    const char *default_value;
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

#define ENV_GET_VARIABLE 15
#define ENV_SET_VARIABLES 16
#define ENV_GET_VARIABLE_UPDATE 17
#define ENV_SET_PIXEL_FORMAT 10
#define ENV_GET_LOG_INTERFACE 27
#define ENV_GET_SYSTEM_DIRECTORY 9
#define ENV_GET_SAVE_DIRECTORY 31
#define ENV_SET_MEMORY_MAPS (36 | 0x10000)
#define ENV_GET_CORE_OPTIONS_VERSION 52
#define ENV_SET_CORE_OPTIONS 53
#define PIXEL_FORMAT_XRGB8888 1
#define MEMDESC_SYSTEM_RAM (1 << 2)
#define MEMDESC_SAVE_RAM (1 << 3)
#define MEMORY_SAVE_RAM 0
#define MEMORY_SYSTEM_RAM 2
#define DEVICE_JOYPAD 1

#define WIDTH 64
#define HEIGHT 48
#define AUDIO_FRAMES 100
#define STATE_MAGIC 0x54534541u /* "AEST" */

enum fault {
    FAULT_NONE, FAULT_TIMESTAMP, FAULT_RANDOM, FAULT_LEAK, FAULT_FORGET, FAULT_GROW, FAULT_BUTTON, FAULT_CRASH,
    FAULT_SEGV, FAULT_EXIT, FAULT_HANG, FAULT_STDOUT
};
/* The frame (machine.frame, counted from 1) in which segv, exit and hang strike: input-stream
 * frame 49. */
#define FAULT_FRAME 50

/* The serialized state, in this order: magic, frame, generator, RAM, save RAM. */
struct machine {
    uint32_t magic;
    uint32_t frame;
    uint32_t rng;
    uint8_t ram[256];
    uint8_t sram[64];
};
#define STATE_LEN sizeof(struct machine)
/* Where the timestamp fault writes its clock reading: right after the machine. */
#define STATE_TIMESTAMP_OFFSET STATE_LEN

static struct machine machine;
static enum fault fault;
/* Not serialized (the faults' hidden state). */
static unsigned long runs_in_process;
static uint8_t forgotten_mode;

static uint32_t picture[WIDTH * HEIGHT];
static int16_t audio[AUDIO_FRAMES * 2];

static retro_environment_t environment;
static retro_video_refresh_t video;
static retro_audio_sample_batch_t audio_batch;
static retro_input_poll_t input_poll;
static retro_input_state_t input_state;
static retro_log_printf_t log_line;

static const struct retro_variable variables[] = {
    {"anestest_fault", "Fault; none|timestamp|random|leak|forget|grow|button|crash|segv|exit|hang|stdout"},
    {"anestest_step", "Generator step; 1|3"},
    {NULL, NULL},
};
static const struct retro_core_option_definition options[] = {
    {"anestest_fault", "Fault", "Which misbehaviour to show",
     {{"none", NULL}, {"timestamp", NULL}, {"random", NULL}, {"leak", NULL}, {"forget", NULL},
      {"grow", NULL}, {"button", NULL}, {"crash", NULL}, {"segv", NULL}, {"exit", NULL}, {"hang", NULL},
      {"stdout", NULL}, {NULL, NULL}},
     "none"},
    {"anestest_step", "Generator step", "Added to the generator each frame",
     {{"1", NULL}, {"3", NULL}, {NULL, NULL}},
     "1"},
    {NULL, NULL, NULL, {{NULL, NULL}}, NULL},
};
static uint32_t step = 1;

EXPORT unsigned retro_api_version(void) { return 1; }

EXPORT void retro_set_environment(retro_environment_t cb) {
    unsigned version = 0;
    environment = cb;
    if (environment(ENV_GET_CORE_OPTIONS_VERSION, &version) && version >= 1)
        environment(ENV_SET_CORE_OPTIONS, (void *)options);
    else
        environment(ENV_SET_VARIABLES, (void *)variables);
}
EXPORT void retro_set_video_refresh(retro_video_refresh_t cb) { video = cb; }
EXPORT void retro_set_audio_sample(retro_audio_sample_t cb) { (void)cb; }
EXPORT void retro_set_audio_sample_batch(retro_audio_sample_batch_t cb) { audio_batch = cb; }
EXPORT void retro_set_input_poll(retro_input_poll_t cb) { input_poll = cb; }
EXPORT void retro_set_input_state(retro_input_state_t cb) { input_state = cb; }

EXPORT void retro_init(void) {
    struct retro_log_callback logging;
    if (environment(ENV_GET_LOG_INTERFACE, &logging))
        log_line = logging.log;
}
EXPORT void retro_deinit(void) {}

EXPORT void retro_get_system_info(struct retro_system_info *info) {
    memset(info, 0, sizeof *info);
    info->library_name = "anes test core";
#ifdef ANES_TEST_CORE_BUILD_B
    info->library_version = "1.0-b";
#else
    info->library_version = "1.0-a";
#endif
    info->valid_extensions = "bin|txt";
}

EXPORT void retro_get_system_av_info(struct retro_system_av_info *info) {
    info->geometry.base_width = info->geometry.max_width = WIDTH;
    info->geometry.base_height = info->geometry.max_height = HEIGHT;
    info->geometry.aspect_ratio = 4.0f / 3.0f;
    info->timing.fps = 60.0;
    info->timing.sample_rate = 6000.0;
}

EXPORT void retro_set_controller_port_device(unsigned port, unsigned device) { (void)port, (void)device; }

static const char *option(const char *key) {
    struct retro_variable variable = {key, NULL};
    if (environment(ENV_GET_VARIABLE, &variable) && variable.value)
        return variable.value;
    return NULL;
}

static void power_on(const uint8_t *content, size_t size) {
    size_t i;
    memset(&machine, 0, sizeof machine);
    machine.magic = STATE_MAGIC;
    machine.rng = 1;
    for (i = 0; i < size; i++)
        machine.rng = machine.rng * 31 + content[i];
    if (fault == FAULT_RANDOM) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        machine.rng ^= (uint32_t)now.tv_nsec ^ (uint32_t)getpid();
        for (i = 0; i < sizeof machine.ram; i++)
            machine.ram[i] = (uint8_t)(machine.rng >> (i % 24));
    }
    forgotten_mode = 0;
}

EXPORT bool retro_load_game(const struct retro_game_info *game) {
    static const struct retro_memory_descriptor descriptors[2] = {
        {MEMDESC_SYSTEM_RAM, machine.ram, 0, 0x0000, 0, 0, sizeof machine.ram, "ram"},
        {MEMDESC_SAVE_RAM, machine.sram, 0, 0x6000, 0, 0, sizeof machine.sram, "sram"},
    };
    struct retro_memory_map map = {descriptors, 2};
    unsigned format = PIXEL_FORMAT_XRGB8888;
    const char *value;
    if (!game || !game->data || game->size == 0)
        return false;
    if (!environment(ENV_SET_PIXEL_FORMAT, &format))
        return false;
    value = option("anestest_fault");
    fault = FAULT_NONE;
    if (value && !strcmp(value, "timestamp"))
        fault = FAULT_TIMESTAMP;
    else if (value && !strcmp(value, "random"))
        fault = FAULT_RANDOM;
    else if (value && !strcmp(value, "leak"))
        fault = FAULT_LEAK;
    else if (value && !strcmp(value, "forget"))
        fault = FAULT_FORGET;
    else if (value && !strcmp(value, "grow"))
        fault = FAULT_GROW;
    else if (value && !strcmp(value, "button"))
        fault = FAULT_BUTTON;
    else if (value && !strcmp(value, "crash"))
        fault = FAULT_CRASH;
    else if (value && !strcmp(value, "segv"))
        fault = FAULT_SEGV;
    else if (value && !strcmp(value, "exit"))
        fault = FAULT_EXIT;
    else if (value && !strcmp(value, "hang"))
        fault = FAULT_HANG;
    else if (value && !strcmp(value, "stdout"))
        fault = FAULT_STDOUT;
    value = option("anestest_step");
    step = value && !strcmp(value, "3") ? 3 : 1;
    if (log_line)
        log_line(1, "anes test core: fault %d, step %u, %u bytes of content\n", (int)fault, (unsigned)step,
                 (unsigned)game->size);
    if (fault == FAULT_STDOUT) {
        /* What Debian's Gambatte does at load, then more every frame. */
        printf("anes test core: loaded %u bytes of content\n", (unsigned)game->size);
        fflush(stdout);
    }
    power_on(game->data, game->size);
    environment(ENV_SET_MEMORY_MAPS, &map);
    return true;
}

EXPORT bool retro_load_game_special(unsigned type, const struct retro_game_info *info, size_t num) {
    (void)type, (void)info, (void)num;
    return false;
}
EXPORT void retro_unload_game(void) {}
EXPORT unsigned retro_get_region(void) { return 0; }
EXPORT void retro_reset(void) {
    machine.frame = 0;
    memset(machine.ram, 0, sizeof machine.ram);
}

EXPORT void retro_run(void) {
    unsigned id, x, y;
    uint16_t buttons = 0;
    input_poll();
    for (id = 0; id < 16; id++)
        if (input_state(0, DEVICE_JOYPAD, 0, id))
            buttons |= (uint16_t)(1u << id);
    machine.frame++;
    if (fault == FAULT_CRASH && machine.frame == 100)
        abort();
    if (fault == FAULT_SEGV && machine.frame == FAULT_FRAME) {
        /* A real invalid access, not raise(): a Rust host's SIGSEGV handler returns from a raised
         * signal, but a faulting store runs again with the default handler and kills the process.
         * The null pointer is read from a volatile, so the compiler cannot see it and trap instead. */
        volatile uintptr_t nowhere = 0;
        *(volatile int *)nowhere = 1;
    }
    if (fault == FAULT_EXIT && machine.frame == FAULT_FRAME)
        exit(3);
    if (fault == FAULT_HANG && machine.frame == FAULT_FRAME) {
        /* Longer than any reply timeout a test sets; then it aborts, so that a worker its parent
         * failed to kill does not outlive the test by more than this. */
        for (id = 0; id < 120; id++)
            sleep(1);
        abort();
    }
    if (fault == FAULT_STDOUT) {
        /* 120 bytes a frame, flushed at once, as a core that logs with printf and fflush. */
        printf("anes test core: frame %10u, a line of a core that talks on its stdout every frame, "
               "as some cores do .............\n",
               (unsigned)machine.frame);
        fflush(stdout);
    }
    machine.rng = machine.rng * 1103515245u + 12345u + step;
    machine.ram[0x00] = (uint8_t)machine.frame;
    machine.ram[0x01] = (uint8_t)buttons;
    machine.ram[0x02] = (uint8_t)(machine.rng >> 16);
    machine.ram[0x03] = (uint8_t)(machine.rng >> 24);
    machine.ram[0x40 + machine.frame % 64] ^= (uint8_t)(machine.rng >> 8) ^ (uint8_t)buttons;
    machine.sram[machine.frame % 64] += (uint8_t)(buttons >> 8);
    runs_in_process++;
    if (fault == FAULT_LEAK)
        machine.ram[0x10] = (uint8_t)runs_in_process;
    if (fault == FAULT_FORGET) {
        if (machine.frame == 10)
            forgotten_mode = 1;
        if (machine.frame >= 60)
            machine.ram[0x20] = forgotten_mode ? 0xAA : 0x55;
    }
    if (fault == FAULT_BUTTON) {
        if (buttons & (1u << 2)) /* RETRO_DEVICE_ID_JOYPAD_SELECT */
            forgotten_mode = 1;
        if (forgotten_mode)
            machine.ram[0x20] = (uint8_t)machine.frame;
    }
#ifdef ANES_TEST_CORE_BUILD_B
    if (machine.frame >= 200)
        machine.ram[0x30] ^= 1;
    if (buttons & (1u << 2)) /* RETRO_DEVICE_ID_JOYPAD_SELECT */
        machine.ram[0x31] ^= 1;
#endif
    for (y = 0; y < HEIGHT; y++)
        for (x = 0; x < WIDTH; x++)
            picture[y * WIDTH + x] = (uint32_t)machine.ram[(y * 4 + x / 16) & 0xFF] * 0x010101u;
    for (x = 0; x < AUDIO_FRAMES; x++) {
        int16_t level = (int16_t)((machine.ram[0x40 + x % 64] - 128) * 64);
        audio[2 * x] = level;
        audio[2 * x + 1] = (int16_t)-level;
    }
    video(picture, WIDTH, HEIGHT, WIDTH * sizeof picture[0]);
    audio_batch(audio, AUDIO_FRAMES);
}

static size_t state_size(void) {
    size_t size = STATE_LEN;
    if (fault == FAULT_TIMESTAMP)
        size += 8;
    if (fault == FAULT_GROW)
        size += machine.frame / 60;
    return size;
}

EXPORT size_t retro_serialize_size(void) { return state_size(); }

EXPORT bool retro_serialize(void *data, size_t size) {
    size_t need = state_size();
    if (size < need)
        return false;
    memset(data, 0, need);
    memcpy(data, &machine, STATE_LEN);
    if (fault == FAULT_TIMESTAMP) {
        struct timespec now;
        uint64_t nanos;
        clock_gettime(CLOCK_MONOTONIC, &now);
        nanos = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
        memcpy((uint8_t *)data + STATE_TIMESTAMP_OFFSET, &nanos, sizeof nanos);
    }
    return true;
}

EXPORT bool retro_unserialize(const void *data, size_t size) {
    struct machine loaded;
    if (size < STATE_LEN)
        return false;
    memcpy(&loaded, data, STATE_LEN);
    if (loaded.magic != STATE_MAGIC)
        return false;
    machine = loaded;
    return true;
}

EXPORT void *retro_get_memory_data(unsigned id) {
    if (id == MEMORY_SYSTEM_RAM)
        return machine.ram;
    if (id == MEMORY_SAVE_RAM)
        return machine.sram;
    return NULL;
}
EXPORT size_t retro_get_memory_size(unsigned id) {
    if (id == MEMORY_SYSTEM_RAM)
        return sizeof machine.ram;
    if (id == MEMORY_SAVE_RAM)
        return sizeof machine.sram;
    return 0;
}
EXPORT void retro_cheat_reset(void) {}
EXPORT void retro_cheat_set(unsigned index, bool enabled, const char *code) {
    (void)index, (void)enabled, (void)code;
}

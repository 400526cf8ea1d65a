# Test target programs (`make targets`), built under $(OUT)/targets.
# -O1 keeps each probed function a real call; -fno-omit-frame-pointer and
# -fcf-protection vary the first instruction the probe lands on.
TARGET_DIR := $(OUT)/targets
TARGET_CFLAGS := -g -O1 -fno-inline -pthread

TARGETS := $(TARGET_DIR)/calls $(TARGET_DIR)/calls_cet $(TARGET_DIR)/calls_pie \
	$(TARGET_DIR)/calls_stripped $(TARGET_DIR)/cxx_throw

targets: $(TARGETS)

$(TARGET_DIR)/calls: tests/targets/calls.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -no-pie -fcf-protection=none $< -o $@

$(TARGET_DIR)/calls_cet: tests/targets/calls.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -fcf-protection=full -fno-omit-frame-pointer $< -o $@

$(TARGET_DIR)/calls_pie: tests/targets/calls.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -fPIE -pie -fcf-protection=none $< -o $@

$(TARGET_DIR)/calls_stripped: tests/targets/calls.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TARGET_CFLAGS) -no-pie -s $< -o $@

$(TARGET_DIR)/cxx_throw: tests/targets/cxx_throw.cpp
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -g -O1 -fno-inline $< -o $@

# The program `make demo` traces.
$(OUT)/demo/kvstore: tools/demo/kvstore.c
	$(call msg,TARGET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -O2 $< -o $@

targets: $(OUT)/demo/kvstore

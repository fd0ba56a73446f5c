// vulkan_compute.hpp — the smallest Vulkan compute scaffolding gorge's GPU example and GPU parity
// test share: pick a device with a compute queue, load a SPIR-V compute shader, bind storage
// buffers, dispatch, time with timestamp queries, read back.
//
// It is deliberately plain (one queue, one descriptor set, synchronous submits) so that it reads
// as a recipe; an engine has its own versions of all of this. Errors throw gorge_vk::error naming
// the call and its VkResult; a machine without any usable Vulkan device throws gorge_vk::no_device,
// so callers can tell "cannot run here" from "ran and failed".
//
// Device choice: the environment variable GORGE_VULKAN_DEVICE, if set, picks the first device
// whose name contains it; otherwise a discrete GPU is preferred, then integrated, virtual, and
// finally CPU implementations such as Mesa's lavapipe.
//
// SPDX-License-Identifier: MPL-2.0
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gorge_vk {

struct error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
/// No Vulkan loader, driver or device with a compute queue on this machine.
struct no_device : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline void check(VkResult result, const char* call) {
    if (result != VK_SUCCESS) throw error(std::string(call) + " failed with VkResult " + std::to_string(int(result)));
}

/// Instance, device, compute queue and command pool.
class context {
public:
    explicit context(const char* application_name) {
        VkApplicationInfo app{};
        app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
        app.pApplicationName = application_name;
        app.apiVersion = VK_API_VERSION_1_1;
        VkInstanceCreateInfo ici{};
        ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
        ici.pApplicationInfo = &app;
        const VkResult r = vkCreateInstance(&ici, nullptr, &instance_);
        if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED)
            throw no_device("no Vulkan driver (vkCreateInstance returned " + std::to_string(int(r)) + ")");
        check(r, "vkCreateInstance");
        try {
            pick_device();
            create_device();
        } catch (...) {
            destroy();
            throw;
        }
    }
    ~context() { destroy(); }
    context(const context&) = delete;
    context& operator=(const context&) = delete;

    VkPhysicalDevice physical() const { return physical_; }
    VkDevice device() const { return device_; }
    VkQueue queue() const { return queue_; }
    VkCommandPool command_pool() const { return pool_; }
    const VkPhysicalDeviceProperties& properties() const { return props_; }
    /// Nanoseconds per timestamp tick; 0 when the compute queue has no timestamps.
    double timestamp_period_ns() const { return timestamp_bits_ ? double(props_.limits.timestampPeriod) : 0.0; }
    std::uint32_t timestamp_valid_bits() const { return timestamp_bits_; }
    /// True when the device reports compiled-pipeline statistics (VK_KHR_pipeline_executable_properties,
    /// enabled when present): compute_pipeline::statistics() then lists them.
    bool pipeline_statistics() const { return pipeline_statistics_; }
    /// The device's subgroup size when compute shaders may use the subgroup operations of
    /// gorge.glsl's GORGE_SUBGROUPS (basic, vote, ballot and shuffle; Vulkan 1.1's
    /// VkPhysicalDeviceSubgroupProperties), else 0.
    std::uint32_t compute_subgroup_size() const {
        VkPhysicalDeviceSubgroupProperties sp{};
        sp.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
        VkPhysicalDeviceProperties2 p2{};
        p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
        p2.pNext = &sp;
        vkGetPhysicalDeviceProperties2(physical_, &p2);
        const VkSubgroupFeatureFlags needed = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_VOTE_BIT |
                                              VK_SUBGROUP_FEATURE_BALLOT_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
        const bool usable =
            (sp.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (sp.supportedOperations & needed) == needed;
        return usable ? sp.subgroupSize : 0;
    }

    std::string description() const {
        static const char* const types[] = {"other", "integrated GPU", "discrete GPU", "virtual GPU", "CPU"};
        const unsigned t = unsigned(props_.deviceType);
        return std::string(props_.deviceName) + " (" + (t < 5 ? types[t] : "unknown") + ", Vulkan " +
               std::to_string(VK_VERSION_MAJOR(props_.apiVersion)) + "." +
               std::to_string(VK_VERSION_MINOR(props_.apiVersion)) + ", driver " +
               std::to_string(props_.driverVersion) + ")";
    }

    /// Index of a memory type with all of `required` (and preferably all of `preferred`) flags.
    std::uint32_t memory_type(std::uint32_t type_bits, VkMemoryPropertyFlags required,
                              VkMemoryPropertyFlags preferred = 0) const {
        VkPhysicalDeviceMemoryProperties mp;
        vkGetPhysicalDeviceMemoryProperties(physical_, &mp);
        for (int pass = 0; pass < 2; ++pass) {
            const VkMemoryPropertyFlags want = pass == 0 ? (required | preferred) : required;
            for (std::uint32_t i = 0; i < mp.memoryTypeCount; ++i)
                if ((type_bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return i;
        }
        throw error("no Vulkan memory type with the required properties");
    }

private:
    static int preference(VkPhysicalDeviceType t) {
        switch (t) {
            case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
            case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
            case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
            case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
            default: return 0;
        }
    }

    void pick_device() {
        std::uint32_t n = 0;
        check(vkEnumeratePhysicalDevices(instance_, &n, nullptr), "vkEnumeratePhysicalDevices");
        std::vector<VkPhysicalDevice> devices(n);
        if (n) check(vkEnumeratePhysicalDevices(instance_, &n, devices.data()), "vkEnumeratePhysicalDevices");
        const char* wanted = std::getenv("GORGE_VULKAN_DEVICE");
        int best = -1;
        for (VkPhysicalDevice d : devices) {
            VkPhysicalDeviceProperties p;
            vkGetPhysicalDeviceProperties(d, &p);
            std::uint32_t nq = 0;
            vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, nullptr);
            std::vector<VkQueueFamilyProperties> qs(nq);
            vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, qs.data());
            for (std::uint32_t q = 0; q < nq; ++q) {
                if (!(qs[q].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
                int score = preference(p.deviceType);
                if (wanted && *wanted) score = std::strstr(p.deviceName, wanted) ? 100 : -1;
                if (score > best) {
                    best = score;
                    physical_ = d;
                    props_ = p;
                    family_ = q;
                    timestamp_bits_ = qs[q].timestampValidBits;
                }
                break;
            }
        }
        // A device asked for by name and missing is a configuration error, not "no device here".
        if (best < 0 && wanted && *wanted)
            throw error("no Vulkan device with a compute queue is named like GORGE_VULKAN_DEVICE='" + std::string(wanted) + "'");
        if (best < 0) throw no_device("no Vulkan device with a compute queue");
    }

    /// Whether the physical device offers VK_KHR_pipeline_executable_properties.
    bool has_pipeline_executable_properties() const {
        std::uint32_t n = 0;
        vkEnumerateDeviceExtensionProperties(physical_, nullptr, &n, nullptr);
        std::vector<VkExtensionProperties> exts(n);
        if (n) vkEnumerateDeviceExtensionProperties(physical_, nullptr, &n, exts.data());
        for (const VkExtensionProperties& e : exts)
            if (std::strcmp(e.extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) == 0) return true;
        return false;
    }

    void create_device() {
        const float priority = 1.0f;
        VkDeviceQueueCreateInfo qci{};
        qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
        qci.queueFamilyIndex = family_;
        qci.queueCount = 1;
        qci.pQueuePriorities = &priority;
        VkDeviceCreateInfo dci{};
        dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
        dci.queueCreateInfoCount = 1;
        dci.pQueueCreateInfos = &qci;
        // Pipeline statistics (registers, occupancy, ...) where the driver reports them.
        VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec_features{};
        exec_features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR;
        const char* const exec_extension = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
        if (has_pipeline_executable_properties()) {
            exec_features.pipelineExecutableInfo = VK_TRUE;
            dci.pNext = &exec_features;
            dci.enabledExtensionCount = 1;
            dci.ppEnabledExtensionNames = &exec_extension;
            pipeline_statistics_ = true;
        }
        check(vkCreateDevice(physical_, &dci, nullptr, &device_), "vkCreateDevice");
        vkGetDeviceQueue(device_, family_, 0, &queue_);
        VkCommandPoolCreateInfo pci{};
        pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
        pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
        pci.queueFamilyIndex = family_;
        check(vkCreateCommandPool(device_, &pci, nullptr, &pool_), "vkCreateCommandPool");
    }

    void destroy() {
        if (device_) {
            vkDeviceWaitIdle(device_);
            if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
            vkDestroyDevice(device_, nullptr);
        }
        if (instance_) vkDestroyInstance(instance_, nullptr);
        pool_ = VK_NULL_HANDLE;
        device_ = VK_NULL_HANDLE;
        instance_ = VK_NULL_HANDLE;
    }

    VkInstance instance_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkPhysicalDeviceProperties props_{};
    std::uint32_t family_ = 0;
    std::uint32_t timestamp_bits_ = 0;
    bool pipeline_statistics_ = false;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
};

/// A buffer with its own memory: host-visible (mapped, coherent) or device-local.
class buffer {
public:
    enum class memory { host_visible, device_local };

    buffer(const context& ctx, VkDeviceSize size, VkBufferUsageFlags usage, memory where)
        : device_(ctx.device()), size_(size) {
        if (where == memory::device_local && size > ctx.properties().limits.maxStorageBufferRange &&
            (usage & VK_BUFFER_USAGE_STORAGE_BUFFER_BIT))
            throw error("buffer of " + std::to_string(size) + " bytes exceeds the device's maxStorageBufferRange");
        VkBufferCreateInfo bci{};
        bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
        bci.size = size;
        bci.usage = usage;
        bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
        check(vkCreateBuffer(device_, &bci, nullptr, &buffer_), "vkCreateBuffer");
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(device_, buffer_, &req);
        VkMemoryAllocateInfo mai{};
        mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
        mai.allocationSize = req.size;
        mai.memoryTypeIndex =
            where == memory::host_visible
                ? ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                  VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
                : ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        const VkResult r = vkAllocateMemory(device_, &mai, nullptr, &memory_);
        if (r != VK_SUCCESS) {
            vkDestroyBuffer(device_, buffer_, nullptr);
            check(r, "vkAllocateMemory");
        }
        check(vkBindBufferMemory(device_, buffer_, memory_, 0), "vkBindBufferMemory");
        if (where == memory::host_visible) check(vkMapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
    }
    ~buffer() {
        if (mapped_) vkUnmapMemory(device_, memory_);
        vkDestroyBuffer(device_, buffer_, nullptr);
        vkFreeMemory(device_, memory_, nullptr);
    }
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;

    VkBuffer handle() const { return buffer_; }
    VkDeviceSize size() const { return size_; }
    /// Host pointer of a host-visible buffer (nullptr for device-local ones).
    void* data() const { return mapped_; }

private:
    VkDevice device_;
    VkDeviceSize size_;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    void* mapped_ = nullptr;
};

inline std::vector<std::uint32_t> read_spirv(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw error("cannot open SPIR-V file " + path);
    const std::streamoff bytes = in.tellg();
    if (bytes <= 0 || bytes % 4 != 0) throw error("not a SPIR-V file (size " + std::to_string(bytes) + "): " + path);
    std::vector<std::uint32_t> words(static_cast<std::size_t>(bytes / 4));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(words.data()), bytes);
    if (!in || words[0] != 0x07230203u) throw error("not a SPIR-V file: " + path);
    return words;
}

/// A compute pipeline whose shader reads `storage_buffers` storage buffers at bindings 0..n-1 of
/// set 0 and `push_constant_bytes` bytes of push constants; `specialization` gives the values of
/// 32-bit specialization constants 0..n-1 (e.g. the workgroup size through local_size_x_id).
class compute_pipeline {
public:
    compute_pipeline(const context& ctx, const std::string& spirv_path, std::uint32_t storage_buffers,
                     std::uint32_t push_constant_bytes, const std::vector<std::uint32_t>& specialization = {})
        : device_(ctx.device()), push_bytes_(push_constant_bytes), statistics_(ctx.pipeline_statistics()) {
        const std::vector<std::uint32_t> code = read_spirv(spirv_path);
        VkShaderModuleCreateInfo smci{};
        smci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
        smci.codeSize = code.size() * sizeof(std::uint32_t);
        smci.pCode = code.data();
        check(vkCreateShaderModule(device_, &smci, nullptr, &module_), "vkCreateShaderModule");

        std::vector<VkDescriptorSetLayoutBinding> bindings(storage_buffers);
        for (std::uint32_t i = 0; i < storage_buffers; ++i) {
            bindings[i] = VkDescriptorSetLayoutBinding{};
            bindings[i].binding = i;
            bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            bindings[i].descriptorCount = 1;
            bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
        }
        VkDescriptorSetLayoutCreateInfo dslci{};
        dslci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
        dslci.bindingCount = storage_buffers;
        dslci.pBindings = bindings.data();
        check(vkCreateDescriptorSetLayout(device_, &dslci, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");

        VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_constant_bytes};
        VkPipelineLayoutCreateInfo plci{};
        plci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
        plci.setLayoutCount = 1;
        plci.pSetLayouts = &set_layout_;
        plci.pushConstantRangeCount = push_constant_bytes ? 1 : 0;
        plci.pPushConstantRanges = &range;
        check(vkCreatePipelineLayout(device_, &plci, nullptr, &layout_), "vkCreatePipelineLayout");

        VkComputePipelineCreateInfo cpci{};
        cpci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
        cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        cpci.stage.module = module_;
        cpci.stage.pName = "main";
        std::vector<VkSpecializationMapEntry> entries(specialization.size());
        for (std::size_t i = 0; i < entries.size(); ++i)
            entries[i] = VkSpecializationMapEntry{std::uint32_t(i), std::uint32_t(i * sizeof(std::uint32_t)), sizeof(std::uint32_t)};
        VkSpecializationInfo spec{std::uint32_t(entries.size()), entries.data(),
                                  specialization.size() * sizeof(std::uint32_t), specialization.data()};
        if (!specialization.empty()) cpci.stage.pSpecializationInfo = &spec;
        cpci.layout = layout_;
        if (statistics_) cpci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
        check(vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &cpci, nullptr, &pipeline_), "vkCreateComputePipelines");

        VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, storage_buffers};
        VkDescriptorPoolCreateInfo dpci{};
        dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
        dpci.maxSets = 1;
        dpci.poolSizeCount = 1;
        dpci.pPoolSizes = &ps;
        check(vkCreateDescriptorPool(device_, &dpci, nullptr, &pool_), "vkCreateDescriptorPool");
        VkDescriptorSetAllocateInfo dsai{};
        dsai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
        dsai.descriptorPool = pool_;
        dsai.descriptorSetCount = 1;
        dsai.pSetLayouts = &set_layout_;
        check(vkAllocateDescriptorSets(device_, &dsai, &set_), "vkAllocateDescriptorSets");
    }
    ~compute_pipeline() {
        vkDestroyDescriptorPool(device_, pool_, nullptr);
        vkDestroyPipeline(device_, pipeline_, nullptr);
        vkDestroyPipelineLayout(device_, layout_, nullptr);
        vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
        vkDestroyShaderModule(device_, module_, nullptr);
    }
    compute_pipeline(const compute_pipeline&) = delete;
    compute_pipeline& operator=(const compute_pipeline&) = delete;

    /// Points bindings 0..n-1 at the given buffers (whole range each).
    void bind(const std::vector<const buffer*>& buffers) {
        std::vector<VkDescriptorBufferInfo> infos(buffers.size());
        std::vector<VkWriteDescriptorSet> writes(buffers.size());
        for (std::size_t i = 0; i < buffers.size(); ++i) {
            infos[i] = VkDescriptorBufferInfo{buffers[i]->handle(), 0, VK_WHOLE_SIZE};
            writes[i] = VkWriteDescriptorSet{};
            writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
            writes[i].dstSet = set_;
            writes[i].dstBinding = std::uint32_t(i);
            writes[i].descriptorCount = 1;
            writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            writes[i].pBufferInfo = &infos[i];
        }
        vkUpdateDescriptorSets(device_, std::uint32_t(writes.size()), writes.data(), 0, nullptr);
    }

    /// Records: bind pipeline and set, push constants, dispatch.
    void record_dispatch(VkCommandBuffer cmd, const void* push_constants, std::uint32_t groups_x,
                         std::uint32_t groups_y = 1) const {
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set_, 0, nullptr);
        if (push_bytes_) vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes_, push_constants);
        vkCmdDispatch(cmd, groups_x, groups_y, 1);
    }

    /// The driver's statistics of the compiled pipeline ("name = value" lines, e.g. registers per
    /// thread, occupancy), empty when the device does not report them.
    std::vector<std::string> statistics() const {
        std::vector<std::string> lines;
        if (!statistics_) return lines;
        const auto get_executables = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
            vkGetDeviceProcAddr(device_, "vkGetPipelineExecutablePropertiesKHR"));
        const auto get_statistics = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
            vkGetDeviceProcAddr(device_, "vkGetPipelineExecutableStatisticsKHR"));
        if (!get_executables || !get_statistics) return lines;
        VkPipelineInfoKHR info{};
        info.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR;
        info.pipeline = pipeline_;
        std::uint32_t executables = 0;
        if (get_executables(device_, &info, &executables, nullptr) != VK_SUCCESS) return lines;
        for (std::uint32_t e = 0; e < executables; ++e) {
            VkPipelineExecutableInfoKHR exec{};
            exec.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR;
            exec.pipeline = pipeline_;
            exec.executableIndex = e;
            std::uint32_t n = 0;
            if (get_statistics(device_, &exec, &n, nullptr) != VK_SUCCESS) continue;
            std::vector<VkPipelineExecutableStatisticKHR> stats(n);
            for (VkPipelineExecutableStatisticKHR& st : stats) st.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
            if (get_statistics(device_, &exec, &n, stats.data()) != VK_SUCCESS) continue;
            for (const VkPipelineExecutableStatisticKHR& st : stats) {
                std::string value;
                switch (st.format) {
                    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: value = st.value.b32 ? "true" : "false"; break;
                    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: value = std::to_string(st.value.i64); break;
                    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: value = std::to_string(st.value.u64); break;
                    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: value = std::to_string(st.value.f64); break;
                    default: value = "?"; break;
                }
                lines.push_back(std::string(st.name) + " = " + value);
            }
        }
        return lines;
    }

private:
    VkDevice device_;
    std::uint32_t push_bytes_;
    bool statistics_;
    VkShaderModule module_ = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    VkDescriptorPool pool_ = VK_NULL_HANDLE;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
};

/// One primary command buffer, recorded and submitted synchronously.
class command_buffer {
public:
    explicit command_buffer(const context& ctx) : ctx_(ctx) {
        VkCommandBufferAllocateInfo cbai{};
        cbai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
        cbai.commandPool = ctx.command_pool();
        cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        cbai.commandBufferCount = 1;
        check(vkAllocateCommandBuffers(ctx.device(), &cbai, &cmd_), "vkAllocateCommandBuffers");
    }
    ~command_buffer() { vkFreeCommandBuffers(ctx_.device(), ctx_.command_pool(), 1, &cmd_); }
    command_buffer(const command_buffer&) = delete;
    command_buffer& operator=(const command_buffer&) = delete;

    VkCommandBuffer begin() {
        check(vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
        VkCommandBufferBeginInfo bi{};
        bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
        bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        check(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
        return cmd_;
    }
    /// Ends recording, submits, and waits for the queue to finish.
    void submit_and_wait() {
        check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
        VkSubmitInfo si{};
        si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cmd_;
        check(vkQueueSubmit(ctx_.queue(), 1, &si, VK_NULL_HANDLE), "vkQueueSubmit");
        check(vkQueueWaitIdle(ctx_.queue()), "vkQueueWaitIdle");
    }

private:
    const context& ctx_;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
};

/// Makes compute-shader writes visible to later compute reads/writes and transfers.
inline void compute_write_barrier(VkCommandBuffer cmd) {
    VkMemoryBarrier mb{};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0,
                         nullptr);
}

/// Makes transfer writes visible to the host after the submit completes.
inline void transfer_to_host_barrier(VkCommandBuffer cmd) {
    VkMemoryBarrier mb{};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

/// A pool of timestamp queries.
class timestamps {
public:
    timestamps(const context& ctx, std::uint32_t count) : device_(ctx.device()), count_(count) {
        if (ctx.timestamp_valid_bits() == 0) throw error("the compute queue does not support timestamps");
        VkQueryPoolCreateInfo qpci{};
        qpci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
        qpci.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qpci.queryCount = count;
        check(vkCreateQueryPool(device_, &qpci, nullptr, &pool_), "vkCreateQueryPool");
        valid_mask_ = ctx.timestamp_valid_bits() >= 64 ? ~std::uint64_t(0)
                                                       : ((std::uint64_t(1) << ctx.timestamp_valid_bits()) - 1);
    }
    ~timestamps() { vkDestroyQueryPool(device_, pool_, nullptr); }
    timestamps(const timestamps&) = delete;
    timestamps& operator=(const timestamps&) = delete;

    void reset(VkCommandBuffer cmd) { vkCmdResetQueryPool(cmd, pool_, 0, count_); }
    /// Writes timestamp `index` once all earlier commands have finished.
    void write(VkCommandBuffer cmd, std::uint32_t index) {
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, index);
    }
    /// Reads all timestamps back (waits for them), masked to the valid bits.
    std::vector<std::uint64_t> read() const {
        std::vector<std::uint64_t> t(count_);
        check(vkGetQueryPoolResults(device_, pool_, 0, count_, t.size() * sizeof(std::uint64_t), t.data(),
                                    sizeof(std::uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
              "vkGetQueryPoolResults");
        for (auto& v : t) v &= valid_mask_;
        return t;
    }

private:
    VkDevice device_;
    std::uint32_t count_;
    std::uint64_t valid_mask_ = 0;
    VkQueryPool pool_ = VK_NULL_HANDLE;
};

}  // namespace gorge_vk

"""The zoo's second set: eight more third-party-style float models in plain
torch.nn (no torchvision): keyword spotting, a language model, ResNet-50's
bottlenecks, PP-LCNet, DenseNet, SqueezeNet, SSDLite and a Whisper-style
encoder. bench/export_zoo.py exports them and describes each.

The tables import without torch (the data step runs under an interpreter
that may lack it); models() imports torch.
"""

# The test input's shape of each model, in export order.
SHAPES = {
    "kws_crnn": (1, 1, 49, 40),
    "lstm_lm": (1, 32, 128),
    "resnet50_lite": (1, 3, 224, 224),
    "doc_orient_lcnet": (1, 3, 224, 224),
    "densenet_lite": (1, 3, 128, 128),
    "squeezenet": (1, 3, 224, 224),
    "ssdlite_det": (1, 3, 300, 300),
    "whisper_enc_lite": (1, 80, 300),
}

# The layers rescaled to an output std of 2: the last before each model's
# output activation (ssdlite_det's box and class convs, scale by scale).
CALIB_LAYERS = {
    "kws_crnn": ["fc"],
    "lstm_lm": ["fc"],
    "resnet50_lite": ["fc"],
    "doc_orient_lcnet": ["fc"],
    "densenet_lite": ["classifier"],
    "squeezenet": ["classifier.1"],
    "ssdlite_det": [f"{h}.{i}.1" for i in range(3) for h in ("box_head", "cls_head")],
    "whisper_enc_lite": ["ln_post"],
}

# Output activations that saturate: none in this set.
CENTER = {}

# torch's thread count per model (output_0.pb can differ in the last bits
# at other counts): one, as the 2-core bench machine is shared.
TORCH_THREADS = {n: 1 for n in SHAPES}


def models():
    """Constructors by name (plain torch.nn, no torchvision)."""
    import math
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def he_init(model, mode="fan_in", nonlinearity="relu"):
        # Under torch's default init each conv shrinks its output about 3x and
        # the random BatchNorm statistics do not undo it: past some 20 convs
        # the output no longer depends on the input. He init (what these
        # layouts train from) keeps the scale.
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode=mode, nonlinearity=nonlinearity)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    # kws_crnn: a streaming keyword spotter: two strided convs over
    # (frames, mel), a GRU over the frames, the last step's classes.
    class KwsCrnn(nn.Module):
        def __init__(self, frames=49, mels=40, ch=32, hidden=64, num_classes=12):
            super().__init__()
            # stride 2 over mel only: every frame stays a GRU step
            self.conv = nn.Sequential(
                nn.Conv2d(1, ch, 3, (1, 2), 1, bias=False), nn.BatchNorm2d(ch),
                nn.ReLU(inplace=True),
                nn.Conv2d(ch, ch, 3, (1, 2), 1, bias=False), nn.BatchNorm2d(ch),
                nn.ReLU(inplace=True))
            self.t, self.f = frames, mels // 4                 # 49, 10
            self.gru = nn.GRU(ch * self.f, hidden, batch_first=True)
            # initial state as a buffer: torch.zeros() in forward() is exported
            # as Shape/Gather/Concat/Expand of the batch dim (see conformer_lite)
            self.register_buffer("h0", torch.zeros(1, 1, hidden))
            self.fc = nn.Linear(hidden, num_classes)

        def forward(self, x):                                   # [1,1,49,40]
            x = self.conv(x)                                    # [1,32,49,10]
            x = x.permute(0, 2, 1, 3).reshape(1, self.t, -1)    # [1,49,320]
            y, _ = self.gru(x, self.h0)                         # [1,49,64]
            return torch.softmax(self.fc(y[:, -1]), dim=-1)     # [1,12]

    # lstm_lm: a word-level LSTM language model past its embedding (the zoo
    # feeds float inputs only): logits over the vocabulary at every step.
    class LstmLm(nn.Module):
        def __init__(self, emb=128, hidden=256, layers=2, vocab=1000):
            super().__init__()
            self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True)
            self.register_buffer("h0", torch.zeros(layers, 1, hidden))
            self.register_buffer("c0", torch.zeros(layers, 1, hidden))
            self.fc = nn.Linear(hidden, vocab)

        def forward(self, x):                                   # [1,32,128]
            y, _ = self.lstm(x, (self.h0, self.c0))             # [1,32,256]
            return self.fc(y)                                   # [1,32,1000]

    # resnet50_lite: torchvision's ResNet-50 (v1.5: the stride on the 3x3)
    # with two bottlenecks per stage instead of 3, 4, 6, 3.
    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, cin, planes, stride=1):
            super().__init__()
            cout = planes * self.expansion
            self.conv1 = nn.Conv2d(cin, planes, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3 = nn.Conv2d(planes, cout, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                nn.BatchNorm2d(cout))

        def forward(self, x):
            idt = x if self.downsample is None else self.downsample(x)
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.relu(self.bn2(self.conv2(y)))
            y = self.bn3(self.conv3(y))
            return self.relu(y + idt)

    class ResNet50Lite(nn.Module):
        def __init__(self, layers=(2, 2, 2, 2), width=64, num_classes=1000):
            super().__init__()
            self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            cin, stages = width, []
            for i, n in enumerate(layers):
                planes = width * 2 ** i
                blocks = []
                for j in range(n):
                    blocks.append(Bottleneck(cin, planes, 2 if i > 0 and j == 0 else 1))
                    cin = planes * Bottleneck.expansion
                stages.append(nn.Sequential(*blocks))
            self.layer1, self.layer2, self.layer3, self.layer4 = stages
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(cin, num_classes)
            he_init(self, "fan_out")  # torchvision's

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    # doc_orient_lcnet: PaddleOCR's document-orientation classifier, PP-LCNet
    # x0.5: depthwise-separable blocks (3x3, then 5x5), Hardswish, SE in the
    # last two, a 1x1 conv to 1280 after the pool, softmax over 4 angles.
    def make_divisible(v, divisor=8, min_value=None):
        min_value = min_value or divisor
        new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
        if new_v < 0.9 * v:
            new_v += divisor
        return new_v

    class ConvBNHs(nn.Sequential):
        def __init__(self, cin, cout, k, s=1, groups=1):
            super().__init__(
                nn.Conv2d(cin, cout, k, s, (k - 1) // 2, groups=groups, bias=False),
                nn.BatchNorm2d(cout), nn.Hardswish())

    class LcnetSE(nn.Module):
        def __init__(self, c, reduction=4):
            super().__init__()
            self.avg_pool = nn.AdaptiveAvgPool2d(1)
            self.conv1 = nn.Conv2d(c, c // reduction, 1)
            self.relu = nn.ReLU()
            self.conv2 = nn.Conv2d(c // reduction, c, 1)
            self.hardsigmoid = nn.Hardsigmoid()

        def forward(self, x):
            s = self.relu(self.conv1(self.avg_pool(x)))
            return x * self.hardsigmoid(self.conv2(s))

    class DepthwiseSeparable(nn.Module):
        def __init__(self, cin, cout, k, s, use_se):
            super().__init__()
            self.dw_conv = ConvBNHs(cin, cin, k, s, groups=cin)
            self.se = LcnetSE(cin) if use_se else nn.Identity()
            self.pw_conv = ConvBNHs(cin, cout, 1)

        def forward(self, x):
            return self.pw_conv(self.se(self.dw_conv(x)))

    class PPLCNet(nn.Module):
        # stage: (k, cin, cout, stride, se) per block, at scale 1
        CFG = [
            [(3, 16, 32, 1, False)],
            [(3, 32, 64, 2, False), (3, 64, 64, 1, False)],
            [(3, 64, 128, 2, False), (3, 128, 128, 1, False)],
            [(3, 128, 256, 2, False)] + [(5, 256, 256, 1, False)] * 5,
            [(5, 256, 512, 2, True), (5, 512, 512, 1, True)],
        ]

        def __init__(self, scale=0.5, num_classes=4, last=1280):
            super().__init__()
            def md(c):
                return make_divisible(c * scale)

            self.conv1 = ConvBNHs(3, md(16), 3, 2)
            self.blocks = nn.Sequential(*[
                DepthwiseSeparable(md(ci), md(co), k, s, se)
                for stage in self.CFG for k, ci, co, s, se in stage])
            self.avg_pool = nn.AdaptiveAvgPool2d(1)
            self.last_conv = nn.Conv2d(md(512), last, 1, bias=False)
            self.hardswish = nn.Hardswish()
            self.dropout = nn.Dropout(0.2)
            self.fc = nn.Linear(last, num_classes)
            he_init(self)

        def forward(self, x):
            x = self.avg_pool(self.blocks(self.conv1(x)))
            x = self.dropout(self.hardswish(self.last_conv(x)))
            return torch.softmax(self.fc(torch.flatten(x, 1)), dim=1)

    # densenet_lite: torchvision's DenseNet layout (each layer concatenates
    # all earlier features, BN-ReLU-1x1-BN-ReLU-3x3), three blocks of four.
    class DenseLayer(nn.Module):
        def __init__(self, cin, growth, bn_size=4):
            super().__init__()
            self.norm1 = nn.BatchNorm2d(cin)
            self.relu1 = nn.ReLU(inplace=True)
            self.conv1 = nn.Conv2d(cin, bn_size * growth, 1, bias=False)
            self.norm2 = nn.BatchNorm2d(bn_size * growth)
            self.relu2 = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(bn_size * growth, growth, 3, 1, 1, bias=False)

        def forward(self, feats):
            x = torch.cat(feats, 1)
            x = self.conv1(self.relu1(self.norm1(x)))
            return self.conv2(self.relu2(self.norm2(x)))

    class DenseBlock(nn.ModuleList):
        def __init__(self, n, cin, growth):
            super().__init__(DenseLayer(cin + i * growth, growth) for i in range(n))

        def forward(self, x):
            feats = [x]
            for layer in self:
                feats.append(layer(feats))
            return torch.cat(feats, 1)

    class Transition(nn.Sequential):
        def __init__(self, cin, cout):
            super().__init__(nn.BatchNorm2d(cin), nn.ReLU(inplace=True),
                             nn.Conv2d(cin, cout, 1, bias=False), nn.AvgPool2d(2, 2))

    class DenseNetLite(nn.Module):
        def __init__(self, blocks=(4, 4, 4), growth=32, init=64, num_classes=100):
            super().__init__()
            layers = [nn.Conv2d(3, init, 7, 2, 3, bias=False), nn.BatchNorm2d(init),
                      nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
            c = init
            for i, n in enumerate(blocks):
                layers.append(DenseBlock(n, c, growth))
                c += n * growth
                if i != len(blocks) - 1:
                    layers.append(Transition(c, c // 2))
                    c //= 2
            layers += [nn.BatchNorm2d(c), nn.ReLU(inplace=True)]
            self.features = nn.Sequential(*layers)
            self.classifier = nn.Linear(c, num_classes)
            he_init(self)

        def forward(self, x):
            x = F.adaptive_avg_pool2d(self.features(x), 1)
            return self.classifier(torch.flatten(x, 1))

    # squeezenet: torchvision's SqueezeNet 1.1 (Fire modules, ceil-mode max
    # pools, a conv classifier).
    class Fire(nn.Module):
        def __init__(self, cin, squeeze, e1, e3):
            super().__init__()
            self.squeeze = nn.Conv2d(cin, squeeze, 1)
            self.squeeze_activation = nn.ReLU(inplace=True)
            self.expand1x1 = nn.Conv2d(squeeze, e1, 1)
            self.expand1x1_activation = nn.ReLU(inplace=True)
            self.expand3x3 = nn.Conv2d(squeeze, e3, 3, padding=1)
            self.expand3x3_activation = nn.ReLU(inplace=True)

        def forward(self, x):
            x = self.squeeze_activation(self.squeeze(x))
            return torch.cat([self.expand1x1_activation(self.expand1x1(x)),
                              self.expand3x3_activation(self.expand3x3(x))], 1)

    class SqueezeNet11(nn.Module):
        def __init__(self, num_classes=1000):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 64, 3, 2), nn.ReLU(inplace=True),
                nn.MaxPool2d(3, 2, ceil_mode=True),
                Fire(64, 16, 64, 64), Fire(128, 16, 64, 64),
                nn.MaxPool2d(3, 2, ceil_mode=True),
                Fire(128, 32, 128, 128), Fire(256, 32, 128, 128),
                nn.MaxPool2d(3, 2, ceil_mode=True),
                Fire(256, 48, 192, 192), Fire(384, 48, 192, 192),
                Fire(384, 64, 256, 256), Fire(512, 64, 256, 256))
            self.classifier = nn.Sequential(
                nn.Dropout(0.5), nn.Conv2d(512, num_classes, 1), nn.ReLU(inplace=True),
                nn.AdaptiveAvgPool2d(1))
            # torchvision's init: no BatchNorm here, and under torch's default
            # init the activations would shrink to the biases layer by layer
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_uniform_(m.weight)
                    nn.init.zeros_(m.bias)

        def forward(self, x):
            return torch.flatten(self.classifier(self.features(x)), 1)

    # ssdlite_det: SSDLite on MobileNetV2 at 300x300: heads on the 19x19
    # expansion of block 14, the 10x10 last conv and a 5x5 extra block;
    # box regressions and class softmax concatenated per anchor.
    def conv_bn_relu6(cin, cout, k=1, s=1, groups=1):
        return nn.Sequential(
            nn.Conv2d(cin, cout, k, s, (k - 1) // 2, groups=groups, bias=False),
            nn.BatchNorm2d(cout), nn.ReLU6(inplace=True))

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, s, t):
            super().__init__()
            hid = cin * t
            self.use_res = s == 1 and cin == cout
            layers = [conv_bn_relu6(cin, hid)] if t != 1 else []
            layers += [conv_bn_relu6(hid, hid, 3, s, groups=hid),
                       nn.Conv2d(hid, cout, 1, bias=False), nn.BatchNorm2d(cout)]
            self.conv = nn.Sequential(*layers)

        def forward(self, x):
            return x + self.conv(x) if self.use_res else self.conv(x)

    def prediction_block(cin, cout):
        # torchvision's SSDLite head: 3x3 depthwise (BN, ReLU6), then 1x1
        return nn.Sequential(conv_bn_relu6(cin, cin, 3, groups=cin), nn.Conv2d(cin, cout, 1))

    class SsdLite(nn.Module):
        # MobileNetV2: (expand, channels, repeats, stride)
        CFG = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
               (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]

        def __init__(self, num_classes=21, anchors=(3, 6, 6)):
            super().__init__()
            self.nc = num_classes
            blocks = [conv_bn_relu6(3, 32, 3, 2)]
            cin = 32
            for t, c, n, s in self.CFG:
                for i in range(n):
                    blocks.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                    cin = c
            blocks.append(conv_bn_relu6(cin, 1280))
            # split at the first 160-channel block (19x19 -> 10x10): the first
            # head reads its expansion
            self.body1 = nn.Sequential(*blocks[:14])
            self.split = blocks[14]
            self.body2 = nn.Sequential(*blocks[15:])
            self.extra = nn.Sequential(conv_bn_relu6(1280, 256),
                                       conv_bn_relu6(256, 256, 3, 2, groups=256),
                                       conv_bn_relu6(256, 512))
            chans = (96 * 6, 1280, 512)
            self.box_head = nn.ModuleList(prediction_block(c, a * 4)
                                          for c, a in zip(chans, anchors))
            self.cls_head = nn.ModuleList(prediction_block(c, a * num_classes)
                                          for c, a in zip(chans, anchors))
            # fan in, not torchvision's fan out: torch counts a depthwise
            # conv's fan out over all its channels, which shrinks it again.
            # Gain 1, not ReLU's 2: with the random BatchNorm scales that
            # grows fp32 rounding past the check's tolerance.
            he_init(self, nonlinearity="linear")

        def forward(self, x):
            f0 = self.split.conv[0](self.body1(x))              # [1,576,19,19]
            x = f0
            for m in list(self.split.conv)[1:]:                 # the rest of the block
                x = m(x)
            x = self.body2(x)                                   # [1,1280,10,10]
            feats = [f0, x, self.extra(x)]                      # 19x19, 10x10, 5x5
            n = x.size(0)
            boxes, scores = [], []
            for f, bh, ch in zip(feats, self.box_head, self.cls_head):
                boxes.append(bh(f).permute(0, 2, 3, 1).reshape(n, -1, 4))
                scores.append(ch(f).permute(0, 2, 3, 1).reshape(n, -1, self.nc))
            scores = torch.softmax(torch.cat(scores, 1), dim=-1)
            return torch.cat([torch.cat(boxes, 1), scores], 2)  # [1,1833,25]

    # whisper_enc_lite: openai-whisper's AudioEncoder at tiny's width over 3 s
    # (300 frames), 2 layers: its attention reshapes from q.shape.
    def sinusoids(length, channels, max_timescale=10000):
        inc = math.log(max_timescale) / (channels // 2 - 1)
        inv = torch.exp(-inc * torch.arange(channels // 2))
        t = torch.arange(length)[:, None] * inv[None, :]
        return torch.cat([torch.sin(t), torch.cos(t)], dim=1)

    class MultiHeadAttention(nn.Module):
        def __init__(self, n_state, n_head):
            super().__init__()
            self.n_head = n_head
            self.query = nn.Linear(n_state, n_state)
            self.key = nn.Linear(n_state, n_state, bias=False)
            self.value = nn.Linear(n_state, n_state)
            self.out = nn.Linear(n_state, n_state)

        def forward(self, x):
            q, k, v = self.query(x), self.key(x), self.value(x)
            n_state = q.shape[2]
            scale = (n_state // self.n_head) ** -0.25
            q = q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3) * scale
            k = k.view(*k.shape[:2], self.n_head, -1).permute(0, 2, 3, 1) * scale
            v = v.view(*v.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
            w = F.softmax(q @ k, dim=-1)
            return self.out((w @ v).permute(0, 2, 1, 3).flatten(start_dim=2))

    class ResidualAttentionBlock(nn.Module):
        def __init__(self, n_state, n_head):
            super().__init__()
            self.attn = MultiHeadAttention(n_state, n_head)
            self.attn_ln = nn.LayerNorm(n_state)
            n_mlp = n_state * 4
            self.mlp = nn.Sequential(nn.Linear(n_state, n_mlp), nn.GELU(),
                                     nn.Linear(n_mlp, n_state))
            self.mlp_ln = nn.LayerNorm(n_state)

        def forward(self, x):
            x = x + self.attn(self.attn_ln(x))
            return x + self.mlp(self.mlp_ln(x))

    class WhisperEncLite(nn.Module):
        def __init__(self, n_mels=80, n_ctx=150, n_state=384, n_head=6, n_layer=2):
            super().__init__()
            self.conv1 = nn.Conv1d(n_mels, n_state, 3, padding=1)
            self.conv2 = nn.Conv1d(n_state, n_state, 3, stride=2, padding=1)
            self.register_buffer("positional_embedding", sinusoids(n_ctx, n_state))
            self.blocks = nn.ModuleList(ResidualAttentionBlock(n_state, n_head)
                                        for _ in range(n_layer))
            self.ln_post = nn.LayerNorm(n_state)

        def forward(self, x):                                   # [1,80,300]
            x = F.gelu(self.conv1(x))
            x = F.gelu(self.conv2(x))                           # [1,384,150]
            x = x.permute(0, 2, 1) + self.positional_embedding
            for block in self.blocks:
                x = block(x)
            return self.ln_post(x)                              # [1,150,384]

    return {
        "kws_crnn": KwsCrnn,
        "lstm_lm": LstmLm,
        "resnet50_lite": ResNet50Lite,
        "doc_orient_lcnet": PPLCNet,
        "densenet_lite": DenseNetLite,
        "squeezenet": SqueezeNet11,
        "ssdlite_det": SsdLite,
        "whisper_enc_lite": WhisperEncLite,
    }
